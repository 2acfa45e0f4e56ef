package remote

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/Azure/go-amqp"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// Generic AMQP address prefixes (RabbitMQ's AMQP 1.0 plugin): /queue/NAME
// declares the queue if it is missing, /amq/queue/NAME needs it to exist.
const (
	genericSendPrefix    = "/queue/"
	genericReceivePrefix = "/amq/queue/"
)

// entityAddress returns the Service Bus address of an entity's main queue
// or of one of its sub-queues. entity may carry a sub-queue's suffix itself,
// which then wins over sub.
func entityAddress(entity string, sub broker.SubQueue) string {
	path, s := broker.SplitAddress(strings.Trim(entity, "/"))
	if s == broker.SubQueueMain {
		s = sub
	}
	return broker.SubQueueAddress(path, s)
}

// subQueueOf returns the sub-queue an address names.
func subQueueOf(address string) broker.SubQueue {
	_, s := broker.SplitAddress(address)
	return s
}

// genericAddress returns a generic broker's address for an entity name.
// A name that starts with "/" is an address already (/queue/NAME,
// /amq/queue/NAME, /exchange/NAME/KEY, /topic/KEY on RabbitMQ) and is used
// as it is. On RabbitMQ a plain name is a queue, sent to through
// /queue/NAME (a send to a missing /amq/queue/NAME is accepted and dropped,
// which would lose messages) and received from through /amq/queue/NAME
// (which never creates a queue). On another broker (ActiveMQ Artemis, Qpid,
// Solace…), whose open names another product, a plain name is its address
// as it is.
func (c *Client) genericAddress(entity string, send bool) string {
	if strings.HasPrefix(entity, "/") || c.notRabbit.Load() {
		return entity
	}
	if send {
		return genericSendPrefix + entity
	}
	return genericReceivePrefix + entity
}

// isRabbitMQ reports whether an open's properties name RabbitMQ.
func isRabbitMQ(props map[string]any) bool {
	p, _ := props["product"].(string)
	return strings.EqualFold(p, "RabbitMQ")
}

// sendLink is a cached sender on its own session.
type sendLink struct {
	session *amqp.Session
	sender  *amqp.Sender
}

func (s *sendLink) close() { closeQuietly(s.session) }

// receiveLink is a cached receiver on its own session, with manual credit.
// One receive runs on it at a time.
type receiveLink struct {
	key     string
	address string
	mode    broker.ReceiveMode
	session *amqp.Session
	recv    *amqp.Receiver
	mu      sync.Mutex
	// singleUse links (generic brokers) are not cached: they close when
	// the last of the held deliveries on them is settled.
	singleUse bool
	held      atomic.Int32
	// sessionID names the session whose lock the link holds (a session
	// receiver, not cached by address); "" for other links.
	sessionID string
	closeOnce sync.Once
}

// close ends the link's own session, or detaches a link on a shared one.
func (r *receiveLink) close() {
	r.closeOnce.Do(func() {
		if r.session != nil {
			closeQuietly(r.session)
		} else {
			closeQuietly(r.recv)
		}
	})
}

// settled notes that one held delivery of a single-use link was settled
// (or lost) and closes the link after the last.
func (r *receiveLink) settled() {
	if r != nil && r.singleUse && r.held.Add(-1) == 0 {
		go r.close()
	}
}

// sender returns the cached sender to address, authorizing first.
func (c *Client) sender(ctx context.Context, cn *connection, address string) (*sendLink, error) {
	if err := c.ensureClaim(ctx, cn, address); err != nil {
		return nil, err
	}
	l, err := c.link(ctx, cn, "send|"+strings.ToLower(address), func(ctx context.Context) (linkCloser, error) {
		sess, err := cn.amqp.NewSession(ctx, nil)
		if err != nil {
			return nil, err
		}
		snd, err := sess.NewSender(ctx, address, nil)
		if err != nil {
			closeQuietly(sess)
			return nil, err
		}
		return &sendLink{session: sess, sender: snd}, nil
	})
	if err != nil {
		return nil, err
	}
	return l.(*sendLink), nil
}

// receiver returns the cached receiver from address in mode, authorizing
// first. Service Bus peek-lock receivers settle in mode second (the broker
// confirms every settlement); generic brokers refuse mode second, so their
// peek-lock receivers hold deliveries unsettled in mode first.
// Receive-and-delete receivers ask for pre-settled transfers.
func (c *Client) receiver(ctx context.Context, cn *connection, address string, mode broker.ReceiveMode) (*receiveLink, error) {
	if err := c.ensureClaim(ctx, cn, address); err != nil {
		return nil, err
	}
	key := "recv|" + modeName(mode) + "|" + strings.ToLower(address)
	l, err := c.link(ctx, cn, key, func(ctx context.Context) (linkCloser, error) {
		opts := &amqp.ReceiverOptions{Credit: -1}
		switch {
		case mode == broker.ReceiveAndDelete:
			opts.SettlementMode = amqp.ReceiverSettleModeFirst.Ptr()
			opts.RequestedSenderSettleMode = amqp.SenderSettleModeSettled.Ptr()
		case c.cfg.serviceBus():
			opts.SettlementMode = amqp.ReceiverSettleModeSecond.Ptr()
		default:
			opts.SettlementMode = amqp.ReceiverSettleModeFirst.Ptr()
			opts.RequestedSenderSettleMode = amqp.SenderSettleModeUnsettled.Ptr()
		}
		sess, err := cn.amqp.NewSession(ctx, nil)
		if err != nil {
			return nil, err
		}
		r, err := attachReceiver(ctx, func(ctx context.Context, o *amqp.ReceiverOptions) (*amqp.Receiver, error) {
			return sess.NewReceiver(ctx, address, o)
		}, opts, mode)
		if err != nil {
			closeQuietly(sess)
			return nil, err
		}
		return &receiveLink{key: key, address: address, mode: mode, session: sess, recv: r}, nil
	})
	if err != nil {
		return nil, err
	}
	return l.(*receiveLink), nil
}

// management returns the cached request/response link to the $management
// node of address, authorizing first.
func (c *Client) management(ctx context.Context, cn *connection, address string) (*rpcLink, string, error) {
	if err := c.ensureClaim(ctx, cn, address); err != nil {
		return nil, "", err
	}
	node := address + sbamqp.ManagementSuffix
	key := "rpc|" + strings.ToLower(node)
	l, err := c.link(ctx, cn, key, func(ctx context.Context) (linkCloser, error) {
		return newRPCLink(ctx, cn.amqp, node)
	})
	if err != nil {
		return nil, "", err
	}
	return l.(*rpcLink), key, nil
}

// modeName returns a receive mode's name for link keys and messages.
func modeName(m broker.ReceiveMode) string {
	if m == broker.ReceiveAndDelete {
		return "receive-and-delete"
	}
	return "peek-lock"
}
