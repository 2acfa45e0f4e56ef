package wire

// Terminus durability values (§3.5.5).
const (
	DurabilityNone          uint32 = 0
	DurabilityConfiguration uint32 = 1
	DurabilityUnsettled     uint32 = 2
)

// Terminus expiry policies (§3.5.6). An empty ExpiryPolicy means the
// default, ExpirySessionEnd.
const (
	ExpiryLinkDetach      Symbol = "link-detach"
	ExpirySessionEnd      Symbol = "session-end"
	ExpiryConnectionClose Symbol = "connection-close"
	ExpiryNever           Symbol = "never"
)

// Distribution modes of a source (§3.5.7): copy is a browsing receiver
// (peek), move a consuming one.
const (
	DistributionMove Symbol = "move"
	DistributionCopy Symbol = "copy"
)

// Source is the source terminus of a link (§3.5.3). Zero values of the
// optional fields mean "absent" (the spec's defaults).
type Source struct {
	// Address is the node's address; empty when absent (dynamic nodes).
	Address               string
	Durable               uint32
	ExpiryPolicy          Symbol
	Timeout               uint32 // seconds
	Dynamic               bool
	DynamicNodeProperties Map
	DistributionMode      Symbol
	// Filter is the filter-set: filter names to described filters.
	Filter         Map
	DefaultOutcome DeliveryState
	Outcomes       []Symbol
	Capabilities   []Symbol
}

// Target is the target terminus of a link (§3.5.4).
type Target struct {
	Address               string
	Durable               uint32
	ExpiryPolicy          Symbol
	Timeout               uint32 // seconds
	Dynamic               bool
	DynamicNodeProperties Map
	Capabilities          []Symbol
}

// Coordinator is the transaction coordinator target (§4.5.1), which an
// attach carries instead of a Target when the peer wants transactions.
type Coordinator struct {
	Capabilities []Symbol
}

func (s *Source) appendTo(b []byte) ([]byte, error) {
	start := len(b)
	b, c := beginComposite(b, descSource)
	b = c.str(b, s.Address, s.Address != "")
	b = c.uint(b, s.Durable, s.Durable != 0)
	b = c.symbol(b, s.ExpiryPolicy, s.ExpiryPolicy != "")
	b = c.uint(b, s.Timeout, s.Timeout != 0)
	b = c.boolean(b, s.Dynamic, s.Dynamic)
	b, err := c.fields(b, s.DynamicNodeProperties)
	if err != nil {
		return b[:start], err
	}
	b = c.symbol(b, s.DistributionMode, s.DistributionMode != "")
	if b, err = c.fields(b, s.Filter); err != nil {
		return b[:start], err
	}
	if b, err = c.stateField(b, s.DefaultOutcome); err != nil {
		return b[:start], err
	}
	b = c.symbols(b, s.Outcomes)
	b = c.symbols(b, s.Capabilities)
	return c.end(b), nil
}

func (t *Target) appendTo(b []byte) ([]byte, error) {
	start := len(b)
	b, c := beginComposite(b, descTarget)
	b = c.str(b, t.Address, t.Address != "")
	b = c.uint(b, t.Durable, t.Durable != 0)
	b = c.symbol(b, t.ExpiryPolicy, t.ExpiryPolicy != "")
	b = c.uint(b, t.Timeout, t.Timeout != 0)
	b = c.boolean(b, t.Dynamic, t.Dynamic)
	b, err := c.fields(b, t.DynamicNodeProperties)
	if err != nil {
		return b[:start], err
	}
	b = c.symbols(b, t.Capabilities)
	return c.end(b), nil
}

func (co *Coordinator) appendTo(b []byte) []byte {
	b, c := beginComposite(b, descCoordinator)
	b = c.symbols(b, co.Capabilities)
	return c.end(b)
}

// readAddress reads an address field: a string (or symbol); other address
// types are refused.
func readAddress(d *Decoder) (string, error) { return d.ReadString() }

// readSource reads a source composite.
func readSource(d *Decoder) (*Source, error) {
	f, err := d.readComposite(descSource)
	if err != nil {
		return nil, err
	}
	s := new(Source)
	field(&f, &s.Address, readAddress)
	field(&f, &s.Durable, (*Decoder).ReadUint)
	field(&f, &s.ExpiryPolicy, (*Decoder).ReadSymbol)
	field(&f, &s.Timeout, (*Decoder).ReadUint)
	field(&f, &s.Dynamic, (*Decoder).ReadBool)
	field(&f, &s.DynamicNodeProperties, (*Decoder).ReadMap)
	field(&f, &s.DistributionMode, (*Decoder).ReadSymbol)
	field(&f, &s.Filter, (*Decoder).ReadMap)
	field(&f, &s.DefaultOutcome, (*Decoder).ReadDeliveryState)
	field(&f, &s.Outcomes, (*Decoder).ReadSymbols)
	field(&f, &s.Capabilities, (*Decoder).ReadSymbols)
	if err := f.finish(); err != nil {
		return nil, err
	}
	return s, nil
}

// readTargetField reads the target field of an attach: a target or a
// coordinator.
func readTargetField(d *Decoder) (*Target, *Coordinator, error) {
	start := d.off
	code, sym, err := d.ReadDescriptor()
	if err != nil {
		return nil, nil, err
	}
	switch {
	case sym == "" && code == descTarget:
		f, err := d.readCompositeList("target")
		if err != nil {
			return nil, nil, err
		}
		t := new(Target)
		field(&f, &t.Address, readAddress)
		field(&f, &t.Durable, (*Decoder).ReadUint)
		field(&f, &t.ExpiryPolicy, (*Decoder).ReadSymbol)
		field(&f, &t.Timeout, (*Decoder).ReadUint)
		field(&f, &t.Dynamic, (*Decoder).ReadBool)
		field(&f, &t.DynamicNodeProperties, (*Decoder).ReadMap)
		field(&f, &t.Capabilities, (*Decoder).ReadSymbols)
		if err := f.finish(); err != nil {
			return nil, nil, err
		}
		return t, nil, nil
	case sym == "" && code == descCoordinator:
		f, err := d.readCompositeList("coordinator")
		if err != nil {
			return nil, nil, err
		}
		co := new(Coordinator)
		field(&f, &co.Capabilities, (*Decoder).ReadSymbols)
		if err := f.finish(); err != nil {
			return nil, nil, err
		}
		return nil, co, nil
	}
	d.off = start
	return nil, nil, d.errorf("%s where a target was expected", descriptorName(code, sym))
}
