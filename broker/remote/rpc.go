package remote

import (
	"context"
	"errors"
	"sync"

	"github.com/Azure/go-amqp"
	"github.com/google/uuid"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// rpcCredit is the credit of a request/response link's receiver.
const rpcCredit = 1000

// rpcLink is a request/response link pair to a node ($cbs or a $management
// node): requests go out on the sender with a fresh message-id and the
// receiver's address as reply-to; one goroutine routes responses to their
// callers by correlation-id. Many requests may be in flight at once.
type rpcLink struct {
	node    string
	session *amqp.Session
	sender  *amqp.Sender
	recv    *amqp.Receiver
	reply   string

	mu      sync.Mutex
	waiting map[string]chan *amqp.Message
	err     error // set when the router stopped; every later call fails with it
	done    chan struct{}
}

// rpcResponse is a decoded management response.
type rpcResponse struct {
	status int
	desc   string
	cond   string
	msg    *amqp.Message
}

// newRPCLink attaches a request/response pair to node on a new session.
func newRPCLink(ctx context.Context, conn *amqp.Conn, node string) (*rpcLink, error) {
	sess, err := conn.NewSession(ctx, nil)
	if err != nil {
		return nil, err
	}
	l := &rpcLink{node: node, session: sess, reply: node + "-reply-to-" + uuid.NewString(),
		waiting: make(map[string]chan *amqp.Message), done: make(chan struct{})}
	l.sender, err = sess.NewSender(ctx, node, nil)
	if err != nil {
		closeQuietly(sess)
		return nil, err
	}
	l.recv, err = sess.NewReceiver(ctx, node, &amqp.ReceiverOptions{
		TargetAddress:             l.reply,
		Credit:                    rpcCredit,
		SettlementMode:            amqp.ReceiverSettleModeFirst.Ptr(),
		RequestedSenderSettleMode: amqp.SenderSettleModeSettled.Ptr(),
	})
	if err != nil {
		closeQuietly(sess)
		return nil, err
	}
	go l.route()
	return l, nil
}

// route hands each response to the caller waiting for its correlation-id
// until the link fails or closes.
func (l *rpcLink) route() {
	defer close(l.done)
	for {
		msg, err := l.recv.Receive(context.Background(), nil)
		if err != nil {
			l.fail(err)
			return
		}
		if msg.Properties == nil {
			continue
		}
		id, ok := msg.Properties.CorrelationID.(string)
		if !ok {
			if u, isUUID := msg.Properties.CorrelationID.(amqp.UUID); isUUID {
				id = uuid.UUID(u).String()
			} else {
				continue
			}
		}
		l.mu.Lock()
		ch := l.waiting[id]
		delete(l.waiting, id)
		l.mu.Unlock()
		if ch != nil {
			ch <- msg
		}
	}
}

// fail ends every waiting call with err.
func (l *rpcLink) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = err
	}
	for id, ch := range l.waiting {
		close(ch)
		delete(l.waiting, id)
	}
}

// broken reports whether the link can no longer carry requests.
func (l *rpcLink) broken() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err != nil
}

// close detaches the pair and ends its session.
func (l *rpcLink) close() {
	l.fail(errors.New("link closed"))
	closeQuietly(l.session)
}

// call sends one request and waits for its response. A response with a
// non-2xx status is returned as a *broker.Error made from its error
// condition (application property errorCondition) or status code.
func (l *rpcLink) call(ctx context.Context, op, entity string, props map[string]any, body any) (*rpcResponse, error) {
	id := uuid.NewString()
	reply := l.reply
	msg := &amqp.Message{
		Properties:            &amqp.MessageProperties{MessageID: id, ReplyTo: &reply},
		ApplicationProperties: props,
		Value:                 body,
	}
	ch := make(chan *amqp.Message, 1)
	l.mu.Lock()
	if l.err != nil {
		err := l.err
		l.mu.Unlock()
		return nil, mapErr(err, op, entity)
	}
	l.waiting[id] = ch
	l.mu.Unlock()
	forget := func() {
		l.mu.Lock()
		delete(l.waiting, id)
		l.mu.Unlock()
	}
	if err := l.sender.Send(ctx, msg, nil); err != nil {
		forget()
		return nil, mapErr(err, op, entity)
	}
	var res *amqp.Message
	select {
	case r, ok := <-ch:
		if !ok {
			l.mu.Lock()
			err := l.err
			l.mu.Unlock()
			return nil, mapErr(err, op, entity)
		}
		res = r
	case <-ctx.Done():
		forget()
		return nil, mapErr(ctx.Err(), op, entity)
	}
	r := &rpcResponse{msg: res}
	for _, k := range []string{sbamqp.PropStatusCode, sbamqp.PropCBSStatusCode} {
		if v, ok := res.ApplicationProperties[k]; ok {
			r.status = int(annInt64(v))
			break
		}
	}
	for _, k := range []string{sbamqp.PropStatusDescription, sbamqp.PropCBSStatusDescription} {
		if v, ok := res.ApplicationProperties[k].(string); ok {
			r.desc = v
			break
		}
	}
	r.cond, _ = res.ApplicationProperties[sbamqp.PropErrorCondition].(string)
	if r.status == 0 {
		return nil, &broker.Error{Code: broker.CodeUnknown, Message: op + ": the response carries no status code", Entity: entity}
	}
	if r.status < 200 || r.status > 299 {
		return nil, statusError(r.status, r.cond, r.desc, op, entity)
	}
	return r, nil
}

// closer is anything with a context-taking Close.
type closer interface {
	Close(ctx context.Context) error
}

// closeQuietly closes c with a short bound, ignoring the outcome: it is
// used on paths that already report another error, or are tearing down.
func closeQuietly(c closer) {
	if c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	_ = c.Close(ctx)
}
