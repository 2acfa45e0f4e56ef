package amqpserver

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"time"

	"github.com/peeklock/peeklock/broker/amqpserver/internal/logsafe"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
	"github.com/peeklock/peeklock/broker/sas"
)

// maxPeerFrame caps the frame size the listener writes whatever the peer
// announces, to bound the buffers of outgoing transfers.
const maxPeerFrame = 1 << 20

// handshake negotiates the protocol headers, the optional SASL layer and
// the open exchange.
func (c *conn) handshake() error {
	h, err := c.readHeader()
	if err != nil {
		return err
	}
	if h == wire.HeaderSASL {
		if err := c.sasl(); err != nil {
			return err
		}
		if h, err = c.readHeader(); err != nil {
			return err
		}
		if h != wire.HeaderAMQP {
			c.w.send(wire.HeaderAMQP.Append(nil))
			c.logPeer("refused protocol header after SASL", "header", h)
			return errHandshake
		}
	} else if h != wire.HeaderAMQP {
		// Answer with the header we want (SASL) and close, as §2.2 asks.
		c.w.send(wire.HeaderSASL.Append(nil))
		c.logPeer("refused protocol header", "header", h)
		return errHandshake
	}
	c.w.send(wire.HeaderAMQP.Append(nil))
	return c.open()
}

// readHeader reads a protocol header; bytes that are not one are answered
// with our header before the connection closes.
func (c *conn) readHeader() (wire.ProtocolHeader, error) {
	h, err := c.r.ReadProtocolHeader()
	if err != nil {
		var de *wire.DecodeError
		if errors.As(err, &de) {
			c.w.send(wire.HeaderSASL.Append(nil))
			c.logPeer("not an AMQP protocol header", "err", logsafe.Err(err))
			return h, errHandshake
		}
		return h, err
	}
	c.touch()
	c.hs.saw(headerName(h))
	return h, nil
}

// saslMechanisms are the SASL mechanisms the listener offers: ANONYMOUS
// (the Service Bus SDKs, which then authorize with CBS tokens), PLAIN with
// a configured key name and key, which grants that key's rights on every
// entity, and MSSBCBS, Service Bus's name for ANONYMOUS-then-$cbs, which
// Microsoft's C stack (uamqp, the Python SDK's) requires. EXTERNAL, which
// Service Bus offers as well, needs a client certificate that the listener
// never asks for: it is not offered, and refused when chosen.
var saslMechanisms = []wire.Symbol{wire.MechanismAnonymous, wire.MechanismPlain, wire.MechanismMSSBCBS}

// sasl runs the SASL exchange with one of saslMechanisms.
func (c *conn) sasl() error {
	b := wire.HeaderSASL.Append(nil)
	b, err := wire.AppendFrame(b, wire.FrameSASL, 0, &wire.SASLMechanisms{Mechanisms: saslMechanisms})
	if err != nil {
		return err
	}
	c.w.send(b)
	c.hs.offered = saslMechanisms
	fr, err := c.r.ReadFrame()
	if err != nil {
		return err
	}
	c.touch()
	init, ok := fr.Body.(*wire.SASLInit)
	if fr.Type != wire.FrameSASL || !ok {
		c.hs.saw(frameName(fr.Body))
		c.logPeer("SASL exchange without sasl-init", "frame", frameName(fr.Body), "offered", c.hs.offeredText())
		return errHandshake
	}
	mech := logsafe.Clip(string(init.Mechanism))
	code, why := wire.SASLOK, ""
	switch init.Mechanism {
	case wire.MechanismAnonymous, wire.MechanismMSSBCBS:
	case wire.MechanismPlain:
		if rights, ok := c.plainValid(init.InitialResponse); ok {
			c.grants.mu.Lock()
			c.grants.all |= rights
			c.grants.mu.Unlock()
			c.authenticate()
		} else if !c.opts.AllowAnonymous {
			code, why = wire.SASLAuth, "no configured key name and key match the PLAIN credentials"
		}
	case wire.MechanismExternal:
		code, why = wire.SASLAuth, "the listener takes no client certificates: choose MSSBCBS or ANONYMOUS and put a token on $cbs, or PLAIN with a key"
	default:
		code, why = wire.SASLAuth, "a mechanism the listener did not offer"
	}
	c.hs.saw("sasl-init " + mech)
	c.w.send(mustFrame(wire.FrameSASL, 0, &wire.SASLOutcome{Code: code}))
	if code != wire.SASLOK {
		c.logPeer("SASL authentication failed", "mechanism", mech, "reason", why, "offered", c.hs.offeredText())
		return errHandshake
	}
	return nil
}

// plainValid checks a PLAIN response ("authzid NUL authcid NUL passwd")
// against the configured keys: the user is a key name, the password its
// key. It returns the rights of that key.
func (c *conn) plainValid(resp []byte) (sas.Rights, bool) {
	parts := bytes.Split(resp, []byte{0})
	if len(parts) != 3 {
		return 0, false
	}
	key, ok := c.opts.Keys[string(parts[1])]
	if !ok || subtle.ConstantTimeCompare([]byte(key), parts[2]) != 1 {
		return 0, false
	}
	c.setUser(string(parts[1]))
	if r, limited := c.opts.KeyRights[string(parts[1])]; limited {
		return r, true
	}
	return sas.AllRights, true
}

// open answers the peer's open.
func (c *conn) open() error {
	fr, err := c.r.ReadFrame()
	if err != nil {
		return err
	}
	c.touch()
	c.hs.saw(frameName(fr.Body))
	o, ok := fr.Body.(*wire.Open)
	c.channelMax = uint16(c.opts.MaxSessionsPerConnection - 1)
	if ok && fr.Type == wire.FrameAMQP && fr.Channel == 0 {
		c.channelMax = min(c.channelMax, o.ChannelMaxValue())
		c.peerMaxFrame = min(max(o.FrameSizeMax(), wire.MinMaxFrameSize), maxPeerFrame)
		c.grants.mu.Lock()
		c.grants.host = o.Hostname
		c.grants.mu.Unlock()
		c.setContainer(o.ContainerID)
		if o.IdleTimeout > 0 {
			c.w.heartbeat(time.Duration(o.IdleTimeout) * time.Millisecond / 2)
		}
	}
	var idle uint32
	if c.opts.IdleTimeout > 0 {
		idle = uint32(min(c.opts.IdleTimeout.Milliseconds(), 1<<32-1))
	}
	c.sendFrame(0, &wire.Open{
		ContainerID:  c.opts.ContainerID,
		MaxFrameSize: c.opts.MaxFrameSize,
		ChannelMax:   wire.Some(c.channelMax),
		IdleTimeout:  idle,
		Properties:   wire.Map{{Key: wire.Symbol("product"), Value: "peeklock"}},
	})
	c.opened.Store(true)
	if !ok || fr.Type != wire.FrameAMQP {
		return connError(wire.CondNotAllowed, "the first frame must be an open, got %s", frameName(fr.Body))
	}
	if fr.Channel != 0 {
		return connError(wire.CondNotAllowed, "open on channel %d, want 0", fr.Channel)
	}
	if o.MaxFrameSize != 0 && o.MaxFrameSize < wire.MinMaxFrameSize {
		return connError(wire.CondInvalidField, "max-frame-size %d is below the minimum %d", o.MaxFrameSize, wire.MinMaxFrameSize)
	}
	return nil
}

// mustFrame encodes a frame of the listener's own making, which cannot
// fail to encode (SASL outcomes); an encoding error yields nothing to
// write.
func mustFrame(typ wire.FrameType, ch uint16, p wire.Performative) []byte {
	b, err := wire.AppendFrame(nil, typ, ch, p)
	if err != nil {
		return nil
	}
	return b
}

// frameName names a performative for messages.
func frameName(p wire.Performative) string {
	switch p.(type) {
	case nil:
		return "an empty frame"
	case *wire.Open:
		return "open"
	case *wire.Begin:
		return "begin"
	case *wire.Attach:
		return "attach"
	case *wire.Flow:
		return "flow"
	case *wire.Transfer:
		return "transfer"
	case *wire.Disposition:
		return "disposition"
	case *wire.Detach:
		return "detach"
	case *wire.End:
		return "end"
	case *wire.Close:
		return "close"
	case *wire.SASLMechanisms:
		return "sasl-mechanisms"
	case *wire.SASLInit:
		return "sasl-init"
	case *wire.SASLChallenge:
		return "sasl-challenge"
	case *wire.SASLResponse:
		return "sasl-response"
	case *wire.SASLOutcome:
		return "sasl-outcome"
	}
	return "a frame"
}
