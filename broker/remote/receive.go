package remote

import (
	"context"
	"errors"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/google/uuid"

	"github.com/peeklock/peeklock/broker"
)

// MaxReceive is the most messages one Receive asks for.
const MaxReceive = 5000

// Receive timing: the shortest wait for a first message (see fetch), and
// the quiet gap that ends collecting after it.
const (
	minFirstWait = 20 * time.Millisecond
	receiveGap   = 25 * time.Millisecond
)

// Receive hands over up to req.Max messages. It gives the link exactly that
// much credit, waits up to req.MaxWait for the first message, and then
// drains the credit: the endpoint sends what it has at once and the credit
// ends with the call, so no message is ever locked that the caller does not
// get. Peek-lock messages are held until settled; Locked browses them.
func (c *Client) Receive(ctx context.Context, req broker.ReceiveRequest) ([]*broker.Message, error) {
	if req.Max <= 0 || req.Max > MaxReceive {
		return nil, broker.Errorf(broker.CodeInvalid, "a receive asks for 1 to %d messages (Max is %d)", MaxReceive, req.Max)
	}
	if req.Mode != broker.PeekLock && req.Mode != broker.ReceiveAndDelete {
		return nil, broker.Errorf(broker.CodeInvalid, "unknown receive mode %d", req.Mode)
	}
	var address string
	if c.cfg.serviceBus() {
		address = entityAddress(req.Entity, req.SubQueue)
	} else {
		if req.SubQueue != broker.SubQueueMain {
			return nil, notSupported("a generic AMQP broker has no dead-letter sub-queues (RabbitMQ dead-letters to an exchange of the queue's own configuration)")
		}
		address = c.genericAddress(req.Entity, false)
	}
	sub := subQueueOf(address)
	if req.Entity == "" {
		return nil, broker.Errorf(broker.CodeInvalid, "receive: no entity given")
	}
	ctx, cancel := c.opCtx(ctx)
	defer cancel()
	op := "receive"
	cn, err := c.connFor(op, address)
	if err != nil {
		return nil, err
	}
	var (
		rl   *receiveLink
		raws []*amqp.Message
	)
	if c.cfg.serviceBus() {
		rl, err = c.receiver(ctx, cn, address, req.Mode)
		if err != nil {
			return nil, mapErr(err, op, address)
		}
		raws, err = c.fetch(ctx, cn, rl, req.Max, req.MaxWait)
	} else {
		rl, err = c.singleUseReceiver(ctx, cn, address, req.Mode)
		if err != nil {
			return nil, mapErr(err, op, address)
		}
		raws, err = c.fetchGeneric(ctx, rl, req.Max, req.MaxWait)
		if req.Mode == broker.ReceiveAndDelete {
			// A broker that answered another sender settle mode may send
			// deliveries unsettled: accept them, or they come back when the
			// link closes (accepting a settled one does nothing).
			for _, raw := range raws {
				if aerr := rl.recv.AcceptMessage(ctx, raw); aerr != nil && err == nil {
					err = aerr
				}
			}
		}
		if req.Mode == broker.PeekLock {
			rl.held.Store(int32(len(raws)))
		}
		switch {
		case len(raws) == 0 || req.Mode == broker.ReceiveAndDelete:
			go rl.close()
		case len(raws) < req.Max:
			// Found fewer than asked: a credit is left on the link, which
			// stays open for the held deliveries. Whatever it brings later
			// goes back at once.
			go c.releaseLate(rl)
		}
	}
	out := make([]*broker.Message, 0, len(raws))
	now := c.clock.Now()
	for _, raw := range raws {
		m := received(raw)
		if c.cfg.serviceBus() {
			m.SubQueue = sub
		}
		if !c.cfg.serviceBus() {
			// Generic brokers assign no sequence numbers and no lock tokens:
			// number deliveries in the order this client received them, and
			// name each held delivery by a token of our own.
			if m.SequenceNumber == 0 {
				m.SequenceNumber = c.localSeq.Add(1)
			}
			m.LockToken = broker.LockToken{}
			if req.Mode == broker.PeekLock {
				m.LockToken = broker.LockToken(uuid.New())
			}
		}
		if req.Mode == broker.ReceiveAndDelete {
			m.LockToken, m.LockedUntil = broker.LockToken{}, time.Time{}
		} else if !m.LockToken.IsZero() {
			c.locks.add(&heldLock{token: m.LockToken, address: address, gen: cn.gen, rl: rl, raw: raw, msg: m.Clone()}, now)
		}
		out = append(out, m)
	}
	if err != nil && len(out) == 0 {
		return nil, mapErr(err, op, address)
	}
	// With messages in hand, a failure after them (a drain that did not
	// finish) is not reported: the messages are what matters, and the next
	// receive uses a new link.
	return out, nil
}

// fetch runs one credit cycle on rl: issue max credit, wait up to maxWait
// for a first message, drain, and collect everything that arrived.
func (c *Client) fetch(ctx context.Context, cn *connection, rl *receiveLink, max int, maxWait time.Duration) ([]*amqp.Message, error) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if !c.linkAlive(cn, rl.key, rl) {
		if rl.sessionID != "" {
			return nil, sessionLost(rl.address, "the lock on session "+quoteSession(rl.sessionID)+" is lost: its link closed")
		}
		return nil, &broker.Error{Code: broker.CodeConnectionLost, Message: "receive: the link closed; try again", Entity: rl.address}
	}
	if err := rl.recv.IssueCredit(uint32(max)); err != nil {
		c.retireReceiver(cn, rl)
		return nil, err
	}
	var out []*amqp.Message
	// Wait at least minFirstWait: go-amqp folds credit issued just before a
	// drain into the drain (which then carries no credit), so the credit's
	// own flow must go out first.
	if maxWait < minFirstWait {
		maxWait = minFirstWait
	}
	// Wait for the first message, then take what keeps coming until a quiet
	// gap, so that the drain below (which go-amqp sends with link-credit
	// 0, withdrawing what is left) cuts nothing short that was on its way.
	wait := maxWait
	for len(out) < max {
		wctx, cancel := context.WithTimeout(ctx, wait)
		m, err := rl.recv.Receive(wctx, nil)
		cancel()
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				break // quiet: drain and return what the drain brings
			}
			c.retireReceiver(cn, rl)
			return collect(rl, out, max), err
		}
		out = append(out, m)
		wait = receiveGap
	}
	if len(out) == max {
		// All the credit was used: nothing is outstanding, no drain needed.
		return out, nil
	}
	dctx, cancel := context.WithTimeout(ctx, c.cfg.DrainTimeout)
	err := rl.recv.DrainCredit(dctx, nil)
	cancel()
	out = collect(rl, out, max)
	if err != nil {
		// The endpoint did not confirm the drain: the link's credit is
		// unknown, so retire it; locks taken on it stay settleable through
		// the management node (Service Bus) or are lost (generic).
		c.retireReceiver(cn, rl)
		return out, err
	}
	return out, nil
}

// fetchGeneric receives on a single-use link of a generic broker. It never
// drains: RabbitMQ 3.10 does not answer go-amqp's drain (a flow with drain
// set and link-credit 0) and can stall the connection's next begin or
// attach after one. Peek-lock credit goes out one message at a time, so at
// most one delivery can arrive after the call returns; it stays unsettled on
// the link, and goes back to the queue when the link closes, after the last
// held delivery is settled (closing earlier would put those back too).
// Receive-and-delete (purge) gives all the credit at once and closes the
// link after the call.
func (c *Client) fetchGeneric(ctx context.Context, rl *receiveLink, max int, maxWait time.Duration) ([]*amqp.Message, error) {
	rad := rl.mode == broker.ReceiveAndDelete
	credit := uint32(1)
	if rad {
		credit = uint32(max)
	}
	if err := rl.recv.IssueCredit(credit); err != nil {
		return nil, err
	}
	if maxWait < minFirstWait {
		maxWait = minFirstWait
	}
	var out []*amqp.Message
	wait := maxWait
	for len(out) < max {
		wctx, cancel := context.WithTimeout(ctx, wait)
		m, err := rl.recv.Receive(wctx, nil)
		cancel()
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				break
			}
			return collect(rl, out, max), err
		}
		out = append(out, m)
		wait = receiveGap
		if !rad && len(out) < max {
			if err := rl.recv.IssueCredit(1); err != nil {
				return out, err
			}
		}
	}
	return collect(rl, out, max), nil
}

// releaseLate gives back, with the released outcome (no delivery
// counted), what arrives on a single-use generic link after its receive
// returned with credit left: the broker cannot be made to withdraw the
// credit (RabbitMQ does not answer a drain), so the delivery it brings is
// taken and released at once instead of waiting, unseen, on the link until
// the link closes. It ends when the link closes (after its last held
// delivery is settled).
func (c *Client) releaseLate(rl *receiveLink) {
	for {
		m, err := rl.recv.Receive(context.Background(), nil)
		if err != nil {
			return // the link closed
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeout)
		err = rl.recv.ReleaseMessage(ctx, m)
		cancel()
		if err != nil {
			c.log.Debug("releasing a late delivery failed", "address", rl.address, "err", err)
			return
		}
		c.log.Debug("released a delivery that arrived after its receive", "address", rl.address)
	}
}

// singleUseReceiver opens an uncached receive link on a generic broker.
func (c *Client) singleUseReceiver(ctx context.Context, cn *connection, address string, mode broker.ReceiveMode) (*receiveLink, error) {
	opts := &amqp.ReceiverOptions{Credit: -1, SettlementMode: amqp.ReceiverSettleModeFirst.Ptr()}
	if mode == broker.ReceiveAndDelete {
		opts.RequestedSenderSettleMode = amqp.SenderSettleModeSettled.Ptr()
	} else {
		opts.RequestedSenderSettleMode = amqp.SenderSettleModeUnsettled.Ptr()
	}
	// Single-use links share one session: RabbitMQ can stall a begin that
	// follows closely on the end of another session.
	v, err := c.link(ctx, cn, "session|generic-receive", func(ctx context.Context) (linkCloser, error) {
		sess, err := cn.amqp.NewSession(ctx, nil)
		if err != nil {
			return nil, err
		}
		return &sharedSession{sess}, nil
	})
	if err != nil {
		return nil, err
	}
	ss := v.(*sharedSession)
	r, err := attachReceiver(ctx, func(ctx context.Context, o *amqp.ReceiverOptions) (*amqp.Receiver, error) {
		return ss.s.NewReceiver(ctx, address, o)
	}, opts, mode)
	if err != nil {
		var se *amqp.SessionError
		if errors.As(err, &se) {
			c.dropLink(cn, "session|generic-receive", ss)
		}
		return nil, err
	}
	return &receiveLink{address: address, mode: mode, recv: r, singleUse: true}, nil
}

// sharedSession is a cached session that links come and go on.
type sharedSession struct{ s *amqp.Session }

func (s *sharedSession) close() { closeQuietly(s.s) }

// collect appends the prefetched messages, up to max in all.
func collect(rl *receiveLink, out []*amqp.Message, max int) []*amqp.Message {
	for len(out) < max {
		m := rl.recv.Prefetched()
		if m == nil {
			break
		}
		out = append(out, m)
	}
	return out
}

// retireReceiver drops a receive link from the cache and closes it; a
// session link takes its session lock with it.
func (c *Client) retireReceiver(cn *connection, rl *receiveLink) {
	if rl.sessionID != "" {
		c.sessions.lose(rl.address, rl.sessionID, "its link closed")
	}
	c.locks.loseLink(rl, c.cfg.serviceBus())
	c.dropLink(cn, rl.key, rl)
}

// ReceiveDeferred locks deferred messages by sequence number (Service Bus
// only); they are settled through the management node.
func (c *Client) ReceiveDeferred(ctx context.Context, entity string, seqs []int64) ([]*broker.Message, error) {
	if !c.cfg.serviceBus() {
		return nil, notSupported(c.caps().Reason(broker.CanDefer))
	}
	if len(seqs) == 0 {
		return nil, broker.Errorf(broker.CodeInvalid, "receive deferred: no sequence numbers given")
	}
	address := entityAddress(entity, broker.SubQueueMain)
	ctx, cancel := c.opCtx(ctx)
	defer cancel()
	cn, err := c.connFor("receive deferred", address)
	if err != nil {
		return nil, err
	}
	msgs, err := c.receiveBySequence(ctx, address, "", "", seqs)
	if err != nil {
		return nil, err
	}
	now := c.clock.Now()
	for _, m := range msgs {
		m.SubQueue = subQueueOf(address)
		c.locks.add(&heldLock{token: m.LockToken, address: address, gen: cn.gen, msg: m.Clone()}, now)
	}
	return msgs, nil
}
