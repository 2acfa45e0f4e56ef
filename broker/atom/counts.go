package atom

import "encoding/xml"

// CountDetails are an entity's runtime counts, in the NSCounts namespace.
type CountDetails struct {
	ActiveMessageCount             Int `xml:"ActiveMessageCount"`
	DeadLetterMessageCount         Int `xml:"DeadLetterMessageCount"`
	ScheduledMessageCount          Int `xml:"ScheduledMessageCount"`
	TransferMessageCount           Int `xml:"TransferMessageCount"`
	TransferDeadLetterMessageCount Int `xml:"TransferDeadLetterMessageCount"`
}

// MarshalXML writes the counts as Azure does: CountDetails declares one
// prefix for NSCounts (PrefixCounts) and each count element uses it
// (<d2p1:ActiveMessageCount>). The JavaScript SDK's admin client reads the
// counts only so: it takes the single xmlns:PREFIX attribute of
// CountDetails and looks up "PREFIX:ActiveMessageCount"; a default
// namespace on each element (encoding/xml's way) fails its parsing.
// Namespace-aware readers (the Go SDK) see the same elements either way.
func (c CountDetails) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	start.Name = xml.Name{Local: "CountDetails"}
	start.Attr = []xml.Attr{{Name: xml.Name{Local: "xmlns:" + PrefixCounts}, Value: NSCounts}}
	if err := e.EncodeToken(start); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		n    Int
	}{
		{"ActiveMessageCount", c.ActiveMessageCount},
		{"DeadLetterMessageCount", c.DeadLetterMessageCount},
		{"ScheduledMessageCount", c.ScheduledMessageCount},
		{"TransferMessageCount", c.TransferMessageCount},
		{"TransferDeadLetterMessageCount", c.TransferDeadLetterMessageCount},
	} {
		if err := e.EncodeElement(f.n, xml.StartElement{Name: xml.Name{Local: PrefixCounts + ":" + f.name}}); err != nil {
			return err
		}
	}
	return e.EncodeToken(start.End())
}

// UnmarshalXML reads the counts, whatever prefix they have; a malformed
// count is a *ValueError that names CountDetails.<element>.
func (c *CountDetails) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	type plain CountDetails
	return within(start.Name.Local, d.DecodeElement((*plain)(c), &start))
}
