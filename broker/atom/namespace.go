package atom

import "encoding/xml"

// NamespaceInfo describes the namespace ($namespaceinfo).
type NamespaceInfo struct {
	CreatedTime    Time   `xml:"CreatedTime"`
	MessagingSKU   string `xml:"MessagingSKU"`
	MessagingUnits *Int   `xml:"MessagingUnits"`
	ModifiedTime   Time   `xml:"ModifiedTime"`
	Name           string `xml:"Name"`
	NamespaceType  string `xml:"NamespaceType"`
}

// MarshalXML writes the description in the servicebus/connect namespace.
func (n NamespaceInfo) MarshalXML(e *xml.Encoder, _ xml.StartElement) error {
	type plain NamespaceInfo
	return e.EncodeElement(plain(n), descriptionStart("NamespaceInfo"))
}
