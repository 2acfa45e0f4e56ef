package wire

import "fmt"

// DeliveryState is the state of a delivery (§3.4): Received, or one of the
// outcomes Accepted, Rejected, Released, Modified; OtherState holds states
// this package does not model (transactional states). Use the value types,
// not pointers.
type DeliveryState interface {
	deliveryState()
}

// Received is the non-terminal received state (§3.4.1).
type Received struct {
	SectionNumber uint32
	SectionOffset uint64
}

// Accepted is the accepted outcome (§3.4.2): the message was processed.
type Accepted struct{}

// Rejected is the rejected outcome (§3.4.3). Service Bus dead-letters with
// condition com.microsoft:dead-letter and the reason and description in
// Error.Info.
type Rejected struct {
	Error *Error
}

// Released is the released outcome (§3.4.4): given back unprocessed.
type Released struct{}

// Modified is the modified outcome (§3.4.5). Service Bus abandons with
// Modified{} and defers with UndeliverableHere; MessageAnnotations carries
// the properties to modify.
type Modified struct {
	DeliveryFailed     bool
	UndeliverableHere  bool
	MessageAnnotations Map
}

// OtherState is a delivery state with a descriptor this package does not
// model, such as the transactional states.
type OtherState struct {
	Described
}

func (Received) deliveryState()   {}
func (Accepted) deliveryState()   {}
func (Rejected) deliveryState()   {}
func (Released) deliveryState()   {}
func (Modified) deliveryState()   {}
func (OtherState) deliveryState() {}

// appendDeliveryState writes a delivery state as its described list.
func appendDeliveryState(b []byte, s DeliveryState) ([]byte, error) {
	start := len(b)
	var err error
	switch s := s.(type) {
	case nil:
		return AppendNull(b), nil
	case Received:
		b, c := beginComposite(b, descReceived)
		b = c.uint(b, s.SectionNumber, true)
		b = c.ulong(b, s.SectionOffset, true)
		return c.end(b), nil
	case Accepted:
		b, c := beginComposite(b, descAccepted)
		return c.end(b), nil
	case Rejected:
		b, c := beginComposite(b, descRejected)
		if b, err = c.errorField(b, s.Error); err != nil {
			return b[:start], err
		}
		return c.end(b), nil
	case Released:
		b, c := beginComposite(b, descReleased)
		return c.end(b), nil
	case Modified:
		b, c := beginComposite(b, descModified)
		b = c.boolean(b, s.DeliveryFailed, s.DeliveryFailed)
		b = c.boolean(b, s.UndeliverableHere, s.UndeliverableHere)
		if b, err = c.fields(b, s.MessageAnnotations); err != nil {
			return b[:start], err
		}
		return c.end(b), nil
	case OtherState:
		return appendDescribed(b, s.Described)
	}
	return b, &EncodeError{Msg: fmt.Sprintf("delivery state of type %T: use the value types", s)}
}

// stateField writes an optional delivery-state field.
func (c *compositeWriter) stateField(b []byte, s DeliveryState) ([]byte, error) {
	if s == nil {
		return c.null(b), nil
	}
	b, err := appendDeliveryState(b, s)
	if err != nil {
		return b, err
	}
	return c.done(b), nil
}

// ReadDeliveryState reads a delivery state (the caller has checked for
// null).
func (d *Decoder) ReadDeliveryState() (DeliveryState, error) {
	start := d.off
	code, sym, err := d.ReadDescriptor()
	if err != nil {
		return nil, err
	}
	if sym != "" {
		d.off = start
		v, err := d.ReadAny()
		if err != nil {
			return nil, err
		}
		return OtherState{v.(Described)}, nil
	}
	switch code {
	case descReceived:
		f, err := d.readCompositeList("received")
		if err != nil {
			return nil, err
		}
		var s Received
		f.required(field(&f, &s.SectionNumber, (*Decoder).ReadUint), "section-number")
		f.required(field(&f, &s.SectionOffset, (*Decoder).ReadUlong), "section-offset")
		return s, f.finish()
	case descAccepted, descReleased:
		f, err := d.readCompositeList(descriptorNames[code])
		if err != nil {
			return nil, err
		}
		if err := f.finish(); err != nil {
			return nil, err
		}
		if code == descAccepted {
			return Accepted{}, nil
		}
		return Released{}, nil
	case descRejected:
		f, err := d.readCompositeList("rejected")
		if err != nil {
			return nil, err
		}
		var s Rejected
		field(&f, &s.Error, (*Decoder).ReadError)
		return s, f.finish()
	case descModified:
		f, err := d.readCompositeList("modified")
		if err != nil {
			return nil, err
		}
		var s Modified
		field(&f, &s.DeliveryFailed, (*Decoder).ReadBool)
		field(&f, &s.UndeliverableHere, (*Decoder).ReadBool)
		field(&f, &s.MessageAnnotations, (*Decoder).ReadMap)
		return s, f.finish()
	}
	d.off = start
	v, err := d.ReadAny()
	if err != nil {
		return nil, err
	}
	return OtherState{v.(Described)}, nil
}
