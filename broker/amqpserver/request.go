package amqpserver

import (
	"encoding/binary"
	"net/http"

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
// message-id.
func (r *response) encode(req *broker.Message) []byte {
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
	return wire.EncodeMessage(nil, m, wire.EncodeOptions{})
}

// handleRequest answers one request delivery of a $cbs or $management link
// on the reply link its reply-to names.
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
	if req.ReplyTo == "" {
		c.logPeer("a request without reply-to; no response possible", "node", logsafe.Clip(l.address))
		return
	}
	var resp *response
	if l.node == nodeCBS {
		resp = c.putToken(req)
		resp.cbs = true
	} else {
		resp = c.manage(l, req)
	}
	c.respond(req.ReplyTo, resp.encode(req))
}

// respond queues a response on the reply link attached with target to.
func (c *conn) respond(to string, payload []byte) {
	l := c.replyLink(to)
	if l == nil {
		c.logPeer("no link receives responses for this reply-to; response dropped", "reply-to", logsafe.Clip(to))
		return
	}
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.state != linkAttached {
		return
	}
	if len(l.replies) >= maxQueuedReplies {
		c.logPeer("too many responses wait for credit; response dropped", "reply-to", logsafe.Clip(to))
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
			s.outUnsettled[id] = &outDelivery{link: l, reply: true}
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
