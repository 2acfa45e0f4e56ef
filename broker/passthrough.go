package broker

import "slices"

// Passthrough holds the parts of an AMQP message that Service Bus keeps as
// the sender wrote them and hands to every receiver, without interpreting
// them: the header's durable and priority flags, the properties'
// content-encoding, the delivery and message annotations it does not define
// itself, and the footer. The maps are kept
// encoded, as AMQP maps (a map8 or map32 constructor and its entries), so
// that any AMQP type in them survives; a listener merges them with the
// annotations it writes. Listeners check them before they send them, so a
// map that does not decode is dropped, never sent.
type Passthrough struct {
	// Durable is the header's durable flag.
	Durable bool
	// Priority is the header's priority when HasPriority (else the AMQP
	// default, 4, applies).
	Priority    uint8
	HasPriority bool
	// ContentEncoding is the properties section's content-encoding (a
	// symbol), "" for none.
	ContentEncoding string
	// DeliveryAnnotations and MessageAnnotations hold the entries that are
	// not Service Bus annotations (such as x-opt-lock-token or
	// x-opt-sequence-number); nil when there are none.
	DeliveryAnnotations []byte
	MessageAnnotations  []byte
	// Footer is the footer's map, nil when the message had no footer.
	Footer []byte
}

// IsZero reports whether p carries nothing: the message can go without it.
func (p *Passthrough) IsZero() bool {
	return p == nil || (!p.Durable && !p.HasPriority && p.ContentEncoding == "" && p.DeliveryAnnotations == nil &&
		p.MessageAnnotations == nil && p.Footer == nil)
}

// clone returns a deep copy of p (nil for nil).
func (p *Passthrough) clone() *Passthrough {
	if p == nil {
		return nil
	}
	c := *p
	c.DeliveryAnnotations = slices.Clone(p.DeliveryAnnotations)
	c.MessageAnnotations = slices.Clone(p.MessageAnnotations)
	c.Footer = slices.Clone(p.Footer)
	return &c
}
