package amqpserver

import (
	"errors"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
)

// rawClient speaks AMQP frame by frame, built only from package wire, to
// send what no well-behaved client would.
type rawClient struct {
	t  *testing.T
	nc net.Conn
	r  *wire.FrameReader
}

func (e *testEnv) raw() *rawClient {
	e.t.Helper()
	nc, err := net.Dial("tcp", e.addr)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = nc.Close() })
	return &rawClient{t: e.t, nc: nc, r: wire.NewFrameReader(nc, 1<<20)}
}

func (c *rawClient) write(b []byte) {
	c.t.Helper()
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *rawClient) frame(ch uint16, p wire.Performative) {
	c.t.Helper()
	b, err := wire.AppendFrame(nil, wire.FrameAMQP, ch, p)
	if err != nil {
		c.t.Fatal(err)
	}
	c.write(b)
}

// read returns the next non-empty frame.
func (c *rawClient) read() wire.Frame {
	c.t.Helper()
	for {
		_ = c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		fr, err := c.r.ReadFrame()
		if err != nil {
			c.t.Fatalf("read: %v", err)
		}
		if fr.Body != nil {
			return fr
		}
	}
}

// header writes a protocol header and reads the answer.
func (c *rawClient) header(h wire.ProtocolHeader) wire.ProtocolHeader {
	c.t.Helper()
	c.write(h.Append(nil))
	_ = c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := c.r.ReadProtocolHeader()
	if err != nil {
		c.t.Fatalf("read header: %v", err)
	}
	return got
}

// open runs the AMQP header and open exchange (no SASL) and returns the
// listener's open.
func (c *rawClient) open(o *wire.Open) *wire.Open {
	c.t.Helper()
	if h := c.header(wire.HeaderAMQP); h != wire.HeaderAMQP {
		c.t.Fatalf("header %+v", h)
	}
	c.frame(0, o)
	fr := c.read()
	got, ok := fr.Body.(*wire.Open)
	if !ok {
		c.t.Fatalf("want open, got %T", fr.Body)
	}
	return got
}

// begin starts a session on ch.
func (c *rawClient) begin(ch uint16) {
	c.t.Helper()
	c.frame(ch, &wire.Begin{IncomingWindow: 100, OutgoingWindow: 100})
	if b, ok := c.read().Body.(*wire.Begin); !ok || b.RemoteChannel.Value != ch {
		c.t.Fatalf("begin answer %+v", b)
	}
}

// expectClose reads frames until the listener's close and returns its
// error; the connection must then end.
func (c *rawClient) expectClose() *wire.Error {
	c.t.Helper()
	for {
		fr := c.read()
		if cl, ok := fr.Body.(*wire.Close); ok {
			c.expectEOF()
			return cl.Error
		}
	}
}

// expectEOF checks that the listener closes the connection.
func (c *rawClient) expectEOF() {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	for {
		_, err := c.nc.Read(buf)
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			c.t.Fatal("the listener did not close the connection")
		}
		return
	}
}

func anonymousEnv(t *testing.T) *testEnv {
	env := newEnv(t, engineOpts(), Options{AllowAnonymous: true})
	env.queue("q", smallQueue())
	return env
}

func TestRawDecodeErrorClosesConnection(t *testing.T) {
	env := anonymousEnv(t)
	c := env.raw()
	c.open(&wire.Open{ContainerID: "raw"})
	// A frame whose body is a described list with a broken length.
	c.write([]byte{0, 0, 0, 14, 2, 0, 0, 0, 0x00, 0x53, 0x11, 0xc0, 0xff, 0x01})
	e := c.expectClose()
	if e == nil || e.Condition != wire.CondDecodeError {
		t.Fatalf("close error %+v, want %s", e, wire.CondDecodeError)
	}
}

func TestRawFramingErrors(t *testing.T) {
	env := anonymousEnv(t)
	for name, frame := range map[string][]byte{
		"size below header": {0, 0, 0, 4, 2, 0, 0, 0},
		"bad data offset":   {0, 0, 0, 8, 1, 0, 0, 0},
		"unknown type":      {0, 0, 0, 8, 2, 9, 0, 0},
		"beyond max size":   {0x7f, 0, 0, 0, 2, 0, 0, 0},
	} {
		t.Run(name, func(t *testing.T) {
			c := env.raw()
			c.open(&wire.Open{ContainerID: "raw"})
			c.write(frame)
			e := c.expectClose()
			if e == nil || e.Condition != wire.CondFramingError {
				t.Fatalf("close error %+v, want %s", e, wire.CondFramingError)
			}
		})
	}
}

func TestRawProtocolHeaders(t *testing.T) {
	env := anonymousEnv(t)
	// HTTP never reaches the listener: the port's front hands it to the
	// admin API, and, with none (as here), closes it.
	c := env.raw()
	c.write([]byte("GET / HTTP/1.1\r\n\r\n"))
	c.expectEOF()

	c = env.raw()
	if h := c.header(wire.ProtocolHeader{ID: wire.ProtocolAMQP, Major: 2}); h != wire.HeaderSASL {
		t.Fatalf("answer to AMQP 2.0: %+v", h)
	}
	c.expectEOF()
}

func TestRawSASL(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{})
	for name, tc := range map[string]struct {
		init *wire.SASLInit
		code wire.SASLCode
	}{
		"anonymous":     {&wire.SASLInit{Mechanism: wire.MechanismAnonymous}, wire.SASLOK},
		"plain":         {&wire.SASLInit{Mechanism: wire.MechanismPlain, InitialResponse: []byte("\x00" + DefaultKeyName + "\x00" + DefaultKey)}, wire.SASLOK},
		"plain bad key": {&wire.SASLInit{Mechanism: wire.MechanismPlain, InitialResponse: []byte("\x00" + DefaultKeyName + "\x00nope")}, wire.SASLAuth},
		"plain garbage": {&wire.SASLInit{Mechanism: wire.MechanismPlain, InitialResponse: []byte("nul-less")}, wire.SASLAuth},
		"mssbcbs":       {&wire.SASLInit{Mechanism: wire.MechanismMSSBCBS}, wire.SASLOK},
		"external":      {&wire.SASLInit{Mechanism: wire.MechanismExternal}, wire.SASLAuth},
		"unknown":       {&wire.SASLInit{Mechanism: "SCRAM-SHA-1"}, wire.SASLAuth},
	} {
		t.Run(name, func(t *testing.T) {
			c := env.raw()
			if h := c.header(wire.HeaderSASL); h != wire.HeaderSASL {
				t.Fatalf("header %+v", h)
			}
			mechs, ok := c.read().Body.(*wire.SASLMechanisms)
			if want := []wire.Symbol{wire.MechanismAnonymous, wire.MechanismPlain, wire.MechanismMSSBCBS}; !ok || !slices.Equal(mechs.Mechanisms, want) {
				t.Fatalf("mechanisms %+v, want %v", mechs, want)
			}
			b, _ := wire.AppendFrame(nil, wire.FrameSASL, 0, tc.init)
			c.write(b)
			out, ok := c.read().Body.(*wire.SASLOutcome)
			if !ok || out.Code != tc.code {
				t.Fatalf("outcome %+v, want code %d", out, tc.code)
			}
			if tc.code != wire.SASLOK {
				c.expectEOF()
				return
			}
			c.open(&wire.Open{ContainerID: "raw"})
		})
	}
}

func TestRawSessionErrors(t *testing.T) {
	env := anonymousEnv(t)
	t.Run("frame without session", func(t *testing.T) {
		c := env.raw()
		c.open(&wire.Open{ContainerID: "raw"})
		c.frame(3, &wire.Flow{IncomingWindow: 1})
		if e := c.expectClose(); e == nil || e.Condition != wire.CondNotAllowed {
			t.Fatalf("close error %+v", e)
		}
	})
	t.Run("unattached handle", func(t *testing.T) {
		c := env.raw()
		c.open(&wire.Open{ContainerID: "raw"})
		c.begin(0)
		c.frame(0, &wire.Transfer{Handle: 7, DeliveryID: wire.Some[uint32](0), DeliveryTag: []byte{1}, Payload: []byte{0}})
		end, ok := c.read().Body.(*wire.End)
		if !ok || end.Error == nil || end.Error.Condition != wire.CondUnattachedHandle {
			t.Fatalf("want end with %s, got %+v", wire.CondUnattachedHandle, end)
		}
		// Frames before the peer's end are ignored; the end is answered by
		// nothing (it answers ours) and the channel can begin again.
		c.frame(0, &wire.Flow{IncomingWindow: 1})
		c.frame(0, &wire.End{})
		c.begin(0)
	})
	t.Run("stray end and detach are ignored", func(t *testing.T) {
		// go-amqp ends a session whose begin it gave up on; a client may
		// detach a handle whose attach it gave up on. Neither may cost the
		// connection or the session.
		c := env.raw()
		c.open(&wire.Open{ContainerID: "raw"})
		c.frame(5, &wire.End{})
		c.begin(0)
		c.frame(0, &wire.Detach{Handle: 9, Closed: true})
		c.frame(1, &wire.End{})
		c.attachSender(0, "q")
	})
	t.Run("channel beyond channel-max", func(t *testing.T) {
		c := env.raw()
		o := c.open(&wire.Open{ContainerID: "raw"})
		c.frame(o.ChannelMax.Value+1, &wire.Begin{IncomingWindow: 1, OutgoingWindow: 1})
		if e := c.expectClose(); e == nil || e.Condition != wire.CondFramingError {
			t.Fatalf("close error %+v", e)
		}
	})
	t.Run("second open", func(t *testing.T) {
		c := env.raw()
		c.open(&wire.Open{ContainerID: "raw"})
		c.frame(0, &wire.Open{ContainerID: "again"})
		if e := c.expectClose(); e == nil || e.Condition != wire.CondIllegalState {
			t.Fatalf("close error %+v", e)
		}
	})
	t.Run("peer close is answered", func(t *testing.T) {
		c := env.raw()
		c.open(&wire.Open{ContainerID: "raw"})
		c.frame(0, &wire.Close{})
		if e := c.expectClose(); e != nil {
			t.Fatalf("answer to close carries %+v", e)
		}
	})
}

// attachSender attaches a sending link to addr on channel 0 and returns
// the listener's attach and its first flow.
func (c *rawClient) attachSender(handle uint32, addr string) (*wire.Attach, *wire.Flow) {
	c.t.Helper()
	c.frame(0, &wire.Attach{Name: "s" + addr, Handle: handle, Role: wire.RoleSender, Source: &wire.Source{Address: "me"}, Target: &wire.Target{Address: addr}})
	a, ok := c.read().Body.(*wire.Attach)
	if !ok {
		c.t.Fatalf("want attach")
	}
	if a.Target == nil {
		return a, nil
	}
	f, ok := c.read().Body.(*wire.Flow)
	if !ok {
		c.t.Fatalf("want flow")
	}
	return a, f
}

func TestRawOversizedDeliveryRejected(t *testing.T) {
	env := anonymousEnv(t)
	c := env.raw()
	c.open(&wire.Open{ContainerID: "raw"})
	c.begin(0)
	a, f := c.attachSender(0, "q")
	if a.MaxMessageSize != 1024 || f.LinkCredit.Value != MaxSenderCredit {
		t.Fatalf("max-message-size %d, credit %d", a.MaxMessageSize, f.LinkCredit.Value)
	}
	// Two frames of 700 bytes: over the limit at the second.
	c.frame(0, &wire.Transfer{Handle: 0, DeliveryID: wire.Some[uint32](0), DeliveryTag: []byte{1}, More: true, Payload: make([]byte, 700)})
	c.frame(0, &wire.Transfer{Handle: 0, Payload: make([]byte, 700)})
	d, ok := c.read().Body.(*wire.Disposition)
	if !ok {
		t.Fatal("want disposition")
	}
	rej, ok := d.State.(wire.Rejected)
	if !ok || rej.Error == nil || rej.Error.Condition != wire.CondMessageSizeExceeded || !d.Settled {
		t.Fatalf("disposition %+v", d)
	}
	// Not a message: rejected with a decode error as the outcome.
	c.frame(0, &wire.Transfer{Handle: 0, DeliveryID: wire.Some[uint32](1), DeliveryTag: []byte{2}, Payload: []byte{0xff}})
	for {
		fr := c.read()
		if d, ok := fr.Body.(*wire.Disposition); ok {
			rej, ok := d.State.(wire.Rejected)
			if !ok || rej.Error.Condition != wire.CondInvalidField || d.First != 1 {
				t.Fatalf("disposition %+v", d)
			}
			break
		}
	}
	if n := env.counts("q"); n.Active != 0 {
		t.Fatalf("stored %d", n.Active)
	}
}

func TestRawMaxConnections(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{MaxConnections: 1, AllowAnonymous: true})
	c1 := env.raw()
	c1.open(&wire.Open{ContainerID: "one"})
	c2 := env.raw()
	// The port's front hands a connection to the listener once it has
	// said what it speaks; the listener then refuses it.
	c2.write(wire.HeaderSASL.Append(nil))
	_ = c2.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c2.nc.Read(make([]byte, 8)); !errors.Is(err, io.EOF) {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("a connection beyond MaxConnections stayed open")
		}
	}
}

func TestRawServerCloseSendsForced(t *testing.T) {
	env := anonymousEnv(t)
	c := env.raw()
	c.open(&wire.Open{ContainerID: "raw"})
	go func() { _ = env.srv.Close() }()
	if e := c.expectClose(); e == nil || e.Condition != wire.CondConnectionForced {
		t.Fatalf("close error %+v", e)
	}
}
