package wire

import "math"

// Performative is the body of a non-empty frame: one of the AMQP
// performatives (*Open, *Begin, *Attach, *Flow, *Transfer, *Disposition,
// *Detach, *End, *Close) or SASL frame bodies (*SASLMechanisms, *SASLInit,
// *SASLChallenge, *SASLResponse, *SASLOutcome).
type Performative interface {
	// appendTo writes the performative's described list.
	appendTo(b []byte) ([]byte, error)
}

// Role is a link endpoint's role in attach and disposition.
type Role bool

// Link roles (§2.8.1).
const (
	RoleSender   Role = false
	RoleReceiver Role = true
)

// String returns "sender" or "receiver".
func (r Role) String() string {
	if r == RoleReceiver {
		return "receiver"
	}
	return "sender"
}

// SenderSettleMode is the sender's settlement policy (§2.8.2).
type SenderSettleMode uint8

// Sender settle modes.
const (
	SenderSettleUnsettled SenderSettleMode = 0
	SenderSettleSettled   SenderSettleMode = 1
	SenderSettleMixed     SenderSettleMode = 2
)

// ReceiverSettleMode is the receiver's settlement policy (§2.8.3).
type ReceiverSettleMode uint8

// Receiver settle modes: first settles on receipt, second only after the
// sender settles (Service Bus peek-lock).
const (
	ReceiverSettleFirst  ReceiverSettleMode = 0
	ReceiverSettleSecond ReceiverSettleMode = 1
)

// Default values of fields the peer may leave out.
const (
	DefaultMaxFrameSize uint32 = math.MaxUint32
	DefaultChannelMax   uint16 = math.MaxUint16
	DefaultHandleMax    uint32 = math.MaxUint32
)

func readRole(d *Decoder) (Role, error) {
	v, err := d.ReadBool()
	return Role(v), err
}

func readSenderSettleMode(d *Decoder) (SenderSettleMode, error) {
	start := d.off
	v, err := d.ReadUbyte()
	if err == nil && v > 2 {
		d.off = start
		err = d.errorf("snd-settle-mode %d out of range", v)
	}
	return SenderSettleMode(v), err
}

func readReceiverSettleMode(d *Decoder) (ReceiverSettleMode, error) {
	start := d.off
	v, err := d.ReadUbyte()
	if err == nil && v > 1 {
		d.off = start
		err = d.errorf("rcv-settle-mode %d out of range", v)
	}
	return ReceiverSettleMode(v), err
}

// Open is the open performative (§2.7.1).
type Open struct {
	ContainerID string
	Hostname    string
	// MaxFrameSize is the largest frame the sender of the open accepts;
	// zero means absent (DefaultMaxFrameSize).
	MaxFrameSize uint32
	// ChannelMax is the highest channel number; absent means
	// DefaultChannelMax.
	ChannelMax Opt[uint16]
	// IdleTimeout is in milliseconds; zero means absent (no timeout).
	IdleTimeout         uint32
	OutgoingLocales     []Symbol
	IncomingLocales     []Symbol
	OfferedCapabilities []Symbol
	DesiredCapabilities []Symbol
	Properties          Map
}

// FrameSizeMax returns MaxFrameSize with the default applied.
func (o *Open) FrameSizeMax() uint32 {
	if o.MaxFrameSize == 0 {
		return DefaultMaxFrameSize
	}
	return o.MaxFrameSize
}

// ChannelMaxValue returns ChannelMax with the default applied.
func (o *Open) ChannelMaxValue() uint16 {
	if !o.ChannelMax.Set {
		return DefaultChannelMax
	}
	return o.ChannelMax.Value
}

func (o *Open) appendTo(b []byte) ([]byte, error) {
	start := len(b)
	b, c := beginComposite(b, descOpen)
	b = c.str(b, o.ContainerID, true)
	b = c.str(b, o.Hostname, o.Hostname != "")
	b = c.uint(b, o.MaxFrameSize, o.MaxFrameSize != 0)
	b = c.ushort(b, o.ChannelMax.Value, o.ChannelMax.Set)
	b = c.uint(b, o.IdleTimeout, o.IdleTimeout != 0)
	b = c.symbols(b, o.OutgoingLocales)
	b = c.symbols(b, o.IncomingLocales)
	b = c.symbols(b, o.OfferedCapabilities)
	b = c.symbols(b, o.DesiredCapabilities)
	b, err := c.fields(b, o.Properties)
	if err != nil {
		return b[:start], err
	}
	return c.end(b), nil
}

func readOpen(d *Decoder) (*Open, error) {
	f, err := d.readCompositeList("open")
	if err != nil {
		return nil, err
	}
	o := new(Open)
	f.required(field(&f, &o.ContainerID, (*Decoder).ReadString), "container-id")
	field(&f, &o.Hostname, (*Decoder).ReadString)
	field(&f, &o.MaxFrameSize, (*Decoder).ReadUint)
	optField(&f, &o.ChannelMax, (*Decoder).ReadUshort)
	field(&f, &o.IdleTimeout, (*Decoder).ReadUint)
	field(&f, &o.OutgoingLocales, (*Decoder).ReadSymbols)
	field(&f, &o.IncomingLocales, (*Decoder).ReadSymbols)
	field(&f, &o.OfferedCapabilities, (*Decoder).ReadSymbols)
	field(&f, &o.DesiredCapabilities, (*Decoder).ReadSymbols)
	field(&f, &o.Properties, (*Decoder).ReadMap)
	return o, f.finish()
}

// Begin is the begin performative (§2.7.2).
type Begin struct {
	// RemoteChannel is set in the reply to a peer's begin.
	RemoteChannel  Opt[uint16]
	NextOutgoingID uint32
	IncomingWindow uint32
	OutgoingWindow uint32
	// HandleMax is the highest link handle; absent means DefaultHandleMax.
	HandleMax           Opt[uint32]
	OfferedCapabilities []Symbol
	DesiredCapabilities []Symbol
	Properties          Map
}

// HandleMaxValue returns HandleMax with the default applied.
func (bg *Begin) HandleMaxValue() uint32 {
	if !bg.HandleMax.Set {
		return DefaultHandleMax
	}
	return bg.HandleMax.Value
}

func (bg *Begin) appendTo(b []byte) ([]byte, error) {
	start := len(b)
	b, c := beginComposite(b, descBegin)
	b = c.ushort(b, bg.RemoteChannel.Value, bg.RemoteChannel.Set)
	b = c.uint(b, bg.NextOutgoingID, true)
	b = c.uint(b, bg.IncomingWindow, true)
	b = c.uint(b, bg.OutgoingWindow, true)
	b = c.uint(b, bg.HandleMax.Value, bg.HandleMax.Set)
	b = c.symbols(b, bg.OfferedCapabilities)
	b = c.symbols(b, bg.DesiredCapabilities)
	b, err := c.fields(b, bg.Properties)
	if err != nil {
		return b[:start], err
	}
	return c.end(b), nil
}

func readBegin(d *Decoder) (*Begin, error) {
	f, err := d.readCompositeList("begin")
	if err != nil {
		return nil, err
	}
	bg := new(Begin)
	optField(&f, &bg.RemoteChannel, (*Decoder).ReadUshort)
	f.required(field(&f, &bg.NextOutgoingID, (*Decoder).ReadUint), "next-outgoing-id")
	f.required(field(&f, &bg.IncomingWindow, (*Decoder).ReadUint), "incoming-window")
	f.required(field(&f, &bg.OutgoingWindow, (*Decoder).ReadUint), "outgoing-window")
	optField(&f, &bg.HandleMax, (*Decoder).ReadUint)
	field(&f, &bg.OfferedCapabilities, (*Decoder).ReadSymbols)
	field(&f, &bg.DesiredCapabilities, (*Decoder).ReadSymbols)
	field(&f, &bg.Properties, (*Decoder).ReadMap)
	return bg, f.finish()
}

// Attach is the attach performative (§2.7.3).
type Attach struct {
	Name   string
	Handle uint32
	Role   Role
	// SndSettleMode and RcvSettleMode are absent when the peer left them
	// out (defaults mixed and first); a listener echoes them as asked.
	SndSettleMode Opt[SenderSettleMode]
	RcvSettleMode Opt[ReceiverSettleMode]
	// Source and Target are nil when absent. Target is nil and Coordinator
	// set when the peer attaches to a transaction coordinator.
	Source              *Source
	Target              *Target
	Coordinator         *Coordinator
	Unsettled           Map
	IncompleteUnsettled bool
	// InitialDeliveryCount is written when Role is RoleSender, as the spec
	// requires, and read when present.
	InitialDeliveryCount uint32
	// MaxMessageSize is the largest message the endpoint accepts; zero
	// means absent (no limit).
	MaxMessageSize      uint64
	OfferedCapabilities []Symbol
	DesiredCapabilities []Symbol
	Properties          Map
}

func (a *Attach) appendTo(b []byte) ([]byte, error) {
	start := len(b)
	b, c := beginComposite(b, descAttach)
	b = c.str(b, a.Name, true)
	b = c.uint(b, a.Handle, true)
	b = c.boolean(b, bool(a.Role), true)
	b = c.ubyte(b, uint8(a.SndSettleMode.Value), a.SndSettleMode.Set)
	b = c.ubyte(b, uint8(a.RcvSettleMode.Value), a.RcvSettleMode.Set)
	var err error
	if a.Source != nil {
		if b, err = a.Source.appendTo(b); err != nil {
			return b[:start], err
		}
		b = c.done(b)
	} else {
		b = c.null(b)
	}
	switch {
	case a.Target != nil:
		if b, err = a.Target.appendTo(b); err != nil {
			return b[:start], err
		}
		b = c.done(b)
	case a.Coordinator != nil:
		b = c.done(a.Coordinator.appendTo(b))
	default:
		b = c.null(b)
	}
	if b, err = c.fields(b, a.Unsettled); err != nil {
		return b[:start], err
	}
	b = c.boolean(b, a.IncompleteUnsettled, a.IncompleteUnsettled)
	b = c.uint(b, a.InitialDeliveryCount, a.Role == RoleSender)
	b = c.ulong(b, a.MaxMessageSize, a.MaxMessageSize != 0)
	b = c.symbols(b, a.OfferedCapabilities)
	b = c.symbols(b, a.DesiredCapabilities)
	if b, err = c.fields(b, a.Properties); err != nil {
		return b[:start], err
	}
	return c.end(b), nil
}

func readAttach(d *Decoder) (*Attach, error) {
	f, err := d.readCompositeList("attach")
	if err != nil {
		return nil, err
	}
	a := new(Attach)
	f.required(field(&f, &a.Name, (*Decoder).ReadString), "name")
	f.required(field(&f, &a.Handle, (*Decoder).ReadUint), "handle")
	f.required(field(&f, &a.Role, readRole), "role")
	optField(&f, &a.SndSettleMode, readSenderSettleMode)
	optField(&f, &a.RcvSettleMode, readReceiverSettleMode)
	field(&f, &a.Source, readSource)
	if f.next() {
		a.Target, a.Coordinator, f.err = readTargetField(d)
	}
	field(&f, &a.Unsettled, (*Decoder).ReadMap)
	field(&f, &a.IncompleteUnsettled, (*Decoder).ReadBool)
	field(&f, &a.InitialDeliveryCount, (*Decoder).ReadUint)
	field(&f, &a.MaxMessageSize, (*Decoder).ReadUlong)
	field(&f, &a.OfferedCapabilities, (*Decoder).ReadSymbols)
	field(&f, &a.DesiredCapabilities, (*Decoder).ReadSymbols)
	field(&f, &a.Properties, (*Decoder).ReadMap)
	return a, f.finish()
}

// Flow is the flow performative (§2.7.4). The link fields (Handle,
// DeliveryCount, LinkCredit, Available) are absent in a session-only flow.
type Flow struct {
	NextIncomingID Opt[uint32]
	IncomingWindow uint32
	NextOutgoingID uint32
	OutgoingWindow uint32
	Handle         Opt[uint32]
	DeliveryCount  Opt[uint32]
	LinkCredit     Opt[uint32]
	Available      Opt[uint32]
	Drain          bool
	Echo           bool
	Properties     Map
}

func (fl *Flow) appendTo(b []byte) ([]byte, error) {
	start := len(b)
	b, c := beginComposite(b, descFlow)
	b = c.uint(b, fl.NextIncomingID.Value, fl.NextIncomingID.Set)
	b = c.uint(b, fl.IncomingWindow, true)
	b = c.uint(b, fl.NextOutgoingID, true)
	b = c.uint(b, fl.OutgoingWindow, true)
	b = c.uint(b, fl.Handle.Value, fl.Handle.Set)
	b = c.uint(b, fl.DeliveryCount.Value, fl.DeliveryCount.Set)
	b = c.uint(b, fl.LinkCredit.Value, fl.LinkCredit.Set)
	b = c.uint(b, fl.Available.Value, fl.Available.Set)
	b = c.boolean(b, fl.Drain, fl.Drain)
	b = c.boolean(b, fl.Echo, fl.Echo)
	b, err := c.fields(b, fl.Properties)
	if err != nil {
		return b[:start], err
	}
	return c.end(b), nil
}

func readFlow(d *Decoder) (*Flow, error) {
	f, err := d.readCompositeList("flow")
	if err != nil {
		return nil, err
	}
	fl := new(Flow)
	optField(&f, &fl.NextIncomingID, (*Decoder).ReadUint)
	f.required(field(&f, &fl.IncomingWindow, (*Decoder).ReadUint), "incoming-window")
	f.required(field(&f, &fl.NextOutgoingID, (*Decoder).ReadUint), "next-outgoing-id")
	f.required(field(&f, &fl.OutgoingWindow, (*Decoder).ReadUint), "outgoing-window")
	optField(&f, &fl.Handle, (*Decoder).ReadUint)
	optField(&f, &fl.DeliveryCount, (*Decoder).ReadUint)
	optField(&f, &fl.LinkCredit, (*Decoder).ReadUint)
	optField(&f, &fl.Available, (*Decoder).ReadUint)
	field(&f, &fl.Drain, (*Decoder).ReadBool)
	field(&f, &fl.Echo, (*Decoder).ReadBool)
	field(&f, &fl.Properties, (*Decoder).ReadMap)
	return fl, f.finish()
}

// Transfer is the transfer performative (§2.7.5) with the frame payload
// that follows it: a whole encoded message, or a part of one when More is
// set.
type Transfer struct {
	Handle uint32
	// DeliveryID, DeliveryTag and MessageFormat are set on the first
	// transfer of a delivery and may be absent on continuations.
	DeliveryID    Opt[uint32]
	DeliveryTag   []byte // nil when absent
	MessageFormat Opt[uint32]
	// Settled is written only when true; on continuation frames a listener
	// treats the delivery as settled if any of its transfers says so.
	Settled       bool
	More          bool
	RcvSettleMode Opt[ReceiverSettleMode]
	State         DeliveryState
	Resume        bool
	Aborted       bool
	Batchable     bool
	// Payload is the message bytes carried by this frame. A decoded
	// payload aliases the frame buffer.
	Payload []byte
}

func (t *Transfer) appendTo(b []byte) ([]byte, error) {
	start := len(b)
	b, c := beginComposite(b, descTransfer)
	b = c.uint(b, t.Handle, true)
	b = c.uint(b, t.DeliveryID.Value, t.DeliveryID.Set)
	b = c.binary(b, t.DeliveryTag, t.DeliveryTag != nil)
	b = c.uint(b, t.MessageFormat.Value, t.MessageFormat.Set)
	b = c.boolean(b, t.Settled, t.Settled)
	b = c.boolean(b, t.More, t.More)
	b = c.ubyte(b, uint8(t.RcvSettleMode.Value), t.RcvSettleMode.Set)
	b, err := c.stateField(b, t.State)
	if err != nil {
		return b[:start], err
	}
	b = c.boolean(b, t.Resume, t.Resume)
	b = c.boolean(b, t.Aborted, t.Aborted)
	b = c.boolean(b, t.Batchable, t.Batchable)
	b = c.end(b)
	return append(b, t.Payload...), nil
}

// readTransfer reads a transfer into t, which it clears first.
func readTransfer(d *Decoder, t *Transfer) (*Transfer, error) {
	f, err := d.readCompositeList("transfer")
	if err != nil {
		return nil, err
	}
	*t = Transfer{}
	f.required(field(&f, &t.Handle, (*Decoder).ReadUint), "handle")
	optField(&f, &t.DeliveryID, (*Decoder).ReadUint)
	field(&f, &t.DeliveryTag, (*Decoder).ReadBinary)
	optField(&f, &t.MessageFormat, (*Decoder).ReadUint)
	field(&f, &t.Settled, (*Decoder).ReadBool)
	field(&f, &t.More, (*Decoder).ReadBool)
	optField(&f, &t.RcvSettleMode, readReceiverSettleMode)
	field(&f, &t.State, (*Decoder).ReadDeliveryState)
	field(&f, &t.Resume, (*Decoder).ReadBool)
	field(&f, &t.Aborted, (*Decoder).ReadBool)
	field(&f, &t.Batchable, (*Decoder).ReadBool)
	if len(t.DeliveryTag) > 32 && f.err == nil {
		f.err = d.errorf("transfer: delivery-tag of %d bytes exceeds 32", len(t.DeliveryTag))
	}
	if err := f.finish(); err != nil {
		return nil, err
	}
	if d.off < len(d.buf) {
		t.Payload = d.buf[d.off:len(d.buf):len(d.buf)]
		d.off = len(d.buf)
	}
	return t, nil
}

// Disposition is the disposition performative (§2.7.6): the state of the
// deliveries First through Last (First alone when Last is absent).
type Disposition struct {
	Role      Role
	First     uint32
	Last      Opt[uint32]
	Settled   bool
	State     DeliveryState
	Batchable bool
}

func (ds *Disposition) appendTo(b []byte) ([]byte, error) {
	start := len(b)
	b, c := beginComposite(b, descDisposition)
	b = c.boolean(b, bool(ds.Role), true)
	b = c.uint(b, ds.First, true)
	b = c.uint(b, ds.Last.Value, ds.Last.Set)
	b = c.boolean(b, ds.Settled, ds.Settled)
	b, err := c.stateField(b, ds.State)
	if err != nil {
		return b[:start], err
	}
	b = c.boolean(b, ds.Batchable, ds.Batchable)
	return c.end(b), nil
}

func readDisposition(d *Decoder) (*Disposition, error) {
	f, err := d.readCompositeList("disposition")
	if err != nil {
		return nil, err
	}
	ds := new(Disposition)
	f.required(field(&f, &ds.Role, readRole), "role")
	f.required(field(&f, &ds.First, (*Decoder).ReadUint), "first")
	optField(&f, &ds.Last, (*Decoder).ReadUint)
	field(&f, &ds.Settled, (*Decoder).ReadBool)
	field(&f, &ds.State, (*Decoder).ReadDeliveryState)
	field(&f, &ds.Batchable, (*Decoder).ReadBool)
	return ds, f.finish()
}

// Detach is the detach performative (§2.7.7).
type Detach struct {
	Handle uint32
	Closed bool
	Error  *Error
}

func (dt *Detach) appendTo(b []byte) ([]byte, error) {
	start := len(b)
	b, c := beginComposite(b, descDetach)
	b = c.uint(b, dt.Handle, true)
	b = c.boolean(b, dt.Closed, dt.Closed)
	b, err := c.errorField(b, dt.Error)
	if err != nil {
		return b[:start], err
	}
	return c.end(b), nil
}

func readDetach(d *Decoder) (*Detach, error) {
	f, err := d.readCompositeList("detach")
	if err != nil {
		return nil, err
	}
	dt := new(Detach)
	f.required(field(&f, &dt.Handle, (*Decoder).ReadUint), "handle")
	field(&f, &dt.Closed, (*Decoder).ReadBool)
	field(&f, &dt.Error, (*Decoder).ReadError)
	return dt, f.finish()
}

// End is the end performative (§2.7.8).
type End struct {
	Error *Error
}

func (e *End) appendTo(b []byte) ([]byte, error) {
	return appendErrorOnly(b, descEnd, e.Error)
}

// Close is the close performative (§2.7.9).
type Close struct {
	Error *Error
}

func (cl *Close) appendTo(b []byte) ([]byte, error) {
	return appendErrorOnly(b, descClose, cl.Error)
}

func appendErrorOnly(b []byte, desc uint64, e *Error) ([]byte, error) {
	start := len(b)
	b, c := beginComposite(b, desc)
	b, err := c.errorField(b, e)
	if err != nil {
		return b[:start], err
	}
	return c.end(b), nil
}

func readErrorOnly(d *Decoder, name string) (*Error, error) {
	f, err := d.readCompositeList(name)
	if err != nil {
		return nil, err
	}
	var e *Error
	field(&f, &e, (*Decoder).ReadError)
	return e, f.finish()
}
