package amqpserver

import (
	"encoding/binary"
	"net/http"
	"strings"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/logsafe"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// maxQueuedReplies bounds the responses a reply link holds while it has no
// credit; more are dropped (the client's request times out).
const maxQueuedReplies = 256

// statusOKDescription is the status description of a successful response.
const statusOKDescription = "OK"

// response is the answer to a $cbs or $management request.
type response struct {
	status int32
	desc   string
	cond   wire.Symbol // the error condition of a failure
	body   any         // the amqp-value body; nil is null
	cbs    bool        // use the $cbs property names
}

// okResponse returns a 200 response with body.
func okResponse(body any) *response {
	return &response{status: http.StatusOK, desc: statusOKDescription, body: body}
}

// errorResponse returns the failure response for err.
func (c *conn) errorResponse(err error, address string) *response {
	wc := conditionOf(err)
	return &response{status: wc.status, desc: describe(err, address, c.clock.Now()), cond: wc.cond}
}

// encode returns the response message to req, correlated by its
// message-id: id is that id as the request encoded it
// (wire.EncodedPropertiesField), echoed with its own type; without one the
// correlation-id is the id's text.
func (r *response) encode(req *broker.Message, id []byte) []byte {
	codeKey, descKey := sbamqp.PropStatusCode, sbamqp.PropStatusDescription
	if r.cbs {
		codeKey, descKey = sbamqp.PropCBSStatusCode, sbamqp.PropCBSStatusDescription
	}
	body, err := wire.AppendAMQPValue(nil, r.body)
	if err != nil {
		r.status, r.desc, r.cond = http.StatusInternalServerError, "the response cannot be encoded: "+err.Error(), wire.CondInternalError
		body, _ = wire.AppendAMQPValue(nil, nil)
	}
	props := map[string]any{codeKey: r.status, descKey: r.desc}
	if r.cond != "" {
		props[sbamqp.PropErrorCondition] = r.cond
	}
	m := &broker.Message{
		CorrelationID:         req.MessageID,
		ApplicationProperties: props,
		Body:                  body,
		BodyKind:              broker.BodyValue,
	}
	return wire.EncodeMessage(nil, m, wire.EncodeOptions{CorrelationID: id})
}

// handleRequest answers one request delivery of a $cbs or $management link
// on the link that receives its responses (replyLinkFor).
func (l *link) handleRequest(d *inDelivery) {
	c := l.s.c
	defer func() {
		l.s.mu.Lock()
		l.inflight--
		l.replenishLocked()
		l.s.mu.Unlock()
	}()
	req, err := wire.DecodeMessage(d.payload)
	if err != nil {
		c.logPeer("a request that is not an AMQP message", "node", logsafe.Clip(l.address), "err", logsafe.Err(err))
		return
	}
	var resp *response
	if l.node == nodeCBS {
		resp = c.putToken(req)
		resp.cbs = true
	} else {
		resp = c.manage(l, req)
	}
	to := c.replyLinkFor(l, req.ReplyTo)
	switch {
	case to != nil:
		c.respond(to, resp.encode(req, wire.EncodedPropertiesField(d.payload, wire.FieldMessageID)))
	case req.ReplyTo == "":
		c.logPeer("a request without reply-to, and no receiver attached on its node; response dropped", "node", logsafe.Clip(l.address))
	default:
		c.logPeer("no link receives responses for this reply-to; response dropped", "node", logsafe.Clip(l.address), "reply-to", logsafe.Clip(req.ReplyTo))
	}
}

// replyLinkFor returns the link that receives the responses to a request
// that arrived on link l: the one attached with the request's reply-to as
// its target address (the Go SDK) or name (rhea); for a request without
// reply-to, which Microsoft's C stack (uamqp) sends on $cbs and
// $management, the receiver the same client attached on the same node, in
// the same session if there is one there, else in the connection's session
// of the lowest channel. Nil when there is none.
func (c *conn) replyLinkFor(l *link, replyTo string) *link {
	c.replyMu.Lock()
	defer c.replyMu.Unlock()
	if replyTo != "" {
		return c.replies[replyTo]
	}
	var found *link
	for _, r := range c.replies {
		if !strings.EqualFold(r.address, l.address) {
			continue
		}
		if r.s == l.s {
			return r
		}
		if found == nil || r.s.ch < found.s.ch || r.s.ch == found.s.ch && r.handle < found.handle {
			found = r
		}
	}
	return found
}

// respond queues a response on reply link l.
func (c *conn) respond(l *link, payload []byte) {
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.state != linkAttached {
		return
	}
	if len(l.replies) >= maxQueuedReplies {
		c.logPeer("too many responses wait for credit; response dropped", "reply-to", logsafe.Clip(l.replyTo))
		return
	}
	l.replies = append(l.replies, payload)
	s.flushRepliesLocked(l)
}

// flushRepliesLocked sends the queued responses of reply link l that
// credit and window allow; the rest wait for the peer's next flow.
func (s *session) flushRepliesLocked(l *link) {
	for len(l.replies) > 0 && l.credit > 0 && l.state == linkAttached && !s.done {
		p := l.replies[0]
		if s.remoteIncomingWindow < s.framesFor(len(p)) {
			return
		}
		l.tagSeq++
		id, ok := s.transferLocked(l, binary.BigEndian.AppendUint64(nil, l.tagSeq), p, l.preSettled)
		if !ok {
			return
		}
		if !l.preSettled {
			s.outUnsettled[id] = outDelivery{link: l, reply: true}
			l.unsettled++
		}
		l.replies[0] = nil
		l.replies = l.replies[1:]
	}
}

// flushAllRepliesLocked flushes every reply link of the session (the
// window opened).
func (s *session) flushAllRepliesLocked() {
	for _, l := range s.links {
		if l.kind == kindReplyOut && len(l.replies) > 0 {
			s.flushRepliesLocked(l)
		}
	}
}
