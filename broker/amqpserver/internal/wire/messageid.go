package wire

// Fields of the properties section (§3.2.4) that EncodedPropertiesField
// reads.
const (
	FieldMessageID     = 0
	FieldCorrelationID = 5
)

// EncodedPropertiesField returns field i of the properties section of the
// encoded message b as the AMQP value it was sent as, still encoded and
// aliasing b; nil when it is absent or null, or b cannot be read that far.
// A response echoes its request's message-id (FieldMessageID) as its
// correlation-id (EncodeOptions) with the id's own type (ulong, uuid,
// binary or string), as Service Bus does: Microsoft's C stack (uamqp)
// numbers its requests with ulong ids and matches responses by them.
func EncodedPropertiesField(b []byte, i int) []byte {
	d := Decoder{buf: b}
	for d.Len() > 0 {
		start := d.off
		code, sym, err := d.ReadDescriptor()
		if err != nil || sym != "" {
			return nil
		}
		if code != descProperties {
			if d.Skip() != nil {
				return nil
			}
			continue
		}
		d.off = start
		f, err := d.readComposite(descProperties)
		if err != nil {
			return nil
		}
		for range i { // the fields before: a null one is consumed by next
			if f.left == 0 || f.next() && d.Skip() != nil {
				return nil
			}
		}
		if !f.next() {
			return nil
		}
		valueStart := d.off
		if d.Skip() != nil {
			return nil
		}
		return b[valueStart:d.off]
	}
	return nil
}
