package amqpserver

import (
	"fmt"
	"strings"

	"github.com/peeklock/peeklock/broker/amqpserver/internal/logsafe"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
)

// maxTraced bounds what a handshake trace keeps of what arrived.
const maxTraced = 8

// handshakeTrace is what a connection's handshake has seen so far (the
// reader goroutine's only), for the line logged when the peer leaves
// before the open exchange ended: which SASL mechanisms it was offered and
// what it sent, so that the next unknown client is diagnosable in one look.
type handshakeTrace struct {
	offered []wire.Symbol // the SASL mechanisms offered; nil before the SASL layer
	arrived []string      // what the peer sent, in order: headers, sasl-init and its mechanism, frames
}

// saw records something the peer sent.
func (t *handshakeTrace) saw(what string) {
	if len(t.arrived) < maxTraced {
		t.arrived = append(t.arrived, what)
	}
}

// offeredText lists the mechanisms offered.
func (t *handshakeTrace) offeredText() string {
	names := make([]string, len(t.offered))
	for i, m := range t.offered {
		names[i] = string(m)
	}
	return strings.Join(names, " ")
}

// waitingFor says what the listener expected next.
func (t *handshakeTrace) waitingFor() string {
	switch n := len(t.arrived); {
	case n == 0:
		return "a protocol header"
	case t.offered != nil && n == 1:
		return "sasl-init"
	case t.offered != nil && n == 2:
		return "the AMQP protocol header after SASL"
	}
	return "open"
}

// headerName names a protocol header: "AMQP 1.0.0", "AMQP-SASL 1.0.0".
func headerName(h wire.ProtocolHeader) string {
	layer := fmt.Sprintf("AMQP-%d", h.ID)
	switch h.ID {
	case wire.ProtocolAMQP:
		layer = "AMQP"
	case wire.ProtocolSASL:
		layer = "AMQP-SASL"
	case wire.ProtocolTLS:
		layer = "AMQP-TLS"
	}
	return fmt.Sprintf("%s header %d.%d.%d", layer, h.Major, h.Minor, h.Revision)
}

// logLeftEarly logs a peer that left (err: the end of the stream, or a
// network error) before the open exchange ended. One that sent nothing (a
// port probe) is logged at Debug only.
func (c *conn) logLeftEarly(err error) {
	if len(c.hs.arrived) == 0 {
		c.log.Debug("client left before sending anything", "err", logsafe.Err(err))
		return
	}
	args := []any{"arrived", strings.Join(c.hs.arrived, ", "), "waiting-for", c.hs.waitingFor()}
	if c.hs.offered != nil {
		args = append(args, "offered", c.hs.offeredText())
	}
	c.logPeer("client left before the connection opened", append(args, "err", logsafe.Err(err))...)
}
