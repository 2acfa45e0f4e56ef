package sshserver

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// releaseTimeout bounds the abandons of a session's leftover locks.
const releaseTimeout = 10 * time.Second

// heldLock is a lock a session received.
type heldLock struct {
	entity    string // the address it was received from, as Settle wants it
	seq       int64
	messageID string
}

// sessionClient is one SSH session's view of the shared broker client. It
// records the locks the session receives and abandons the ones it still
// holds when it closes; it writes an audit line for every operation that
// changes something; every Events call is a subscription of its own, ended
// when the session closes; and Close never closes the shared client.
type sessionClient struct {
	// inner is the shared client acting as the session's user (so the
	// histories of the messages it touches name them: broker.ActingAs),
	// wrapped with broker.ReadOnly for read-only sessions.
	inner broker.Client
	audit *slog.Logger // carries the session's identity

	mu     sync.Mutex
	locks  map[broker.LockToken]heldLock
	held   map[heldSession]bool // session locks the session accepted
	subs   map[int]func()
	nextID int
	closed bool

	inflight sync.WaitGroup // calls between enter and leave
}

var (
	_ broker.Client           = (*sessionClient)(nil)
	_ broker.SequenceLocker   = (*sessionClient)(nil)
	_ broker.ResubmitRecorder = (*sessionClient)(nil)
)

// newSessionClient wraps shared for one session of role role; audit already
// carries who the session is, and actor names it in message histories.
func newSessionClient(shared broker.Client, role Role, audit *slog.Logger, actor string) *sessionClient {
	inner := shared
	if actor != "" {
		inner = broker.ActingAs(shared, actor)
	}
	if role != RoleOperator {
		inner = broker.ReadOnly(inner)
	}
	return &sessionClient{
		inner: inner,
		audit: audit,
		locks: make(map[broker.LockToken]heldLock),
		held:  make(map[heldSession]bool),
		subs:  make(map[int]func()),
	}
}

// errSessionEnded is returned by every operation after Close.
var errSessionEnded = &broker.Error{Code: broker.CodeClosed, Message: "the SSH session has ended"}

// enter starts a call through the session client; false once it is
// closed. Every true enter is paired with a leave, and Close waits for the
// calls in flight, so that a lock an in-flight receive takes is given back
// before Close returns.
func (c *sessionClient) enter() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.inflight.Add(1)
	return true
}

// leave ends a call that enter started.
func (c *sessionClient) leave() { c.inflight.Done() }

// Endpoint describes the shared client's endpoint.
func (c *sessionClient) Endpoint() string { return c.inner.Endpoint() }

// State passes the shared client's connection state through.
func (c *sessionClient) State() string { s, _ := broker.StatusOf(c.inner); return s }

// Notice passes the shared client's notice through.
func (c *sessionClient) Notice() string { _, n := broker.StatusOf(c.inner); return n }

// Capabilities are the shared client's.
func (c *sessionClient) Capabilities() broker.Capabilities { return c.inner.Capabilities() }

// Unwrap returns the shared client (read-only for read-only sessions), so
// that broker.RulesOf finds a remote client's rule reader through the
// session's view.
func (c *sessionClient) Unwrap() broker.Client { return c.inner }

// Entities lists the shared client's entities.
func (c *sessionClient) Entities(ctx context.Context) ([]broker.Entity, error) {
	if !c.enter() {
		return nil, errSessionEnded
	}
	defer c.leave()
	return c.inner.Entities(ctx)
}

// Browse peeks through the shared client.
func (c *sessionClient) Browse(ctx context.Context, req broker.BrowseRequest) ([]*broker.Message, error) {
	if !c.enter() {
		return nil, errSessionEnded
	}
	defer c.leave()
	return c.inner.Browse(ctx, req)
}

// Receive receives through the shared client and records the locks.
func (c *sessionClient) Receive(ctx context.Context, req broker.ReceiveRequest) ([]*broker.Message, error) {
	addr := auditAddress(req.Entity, req.SubQueue)
	op := "receive"
	if req.Mode == broker.ReceiveAndDelete {
		op = "receive and delete"
	}
	if !c.enter() {
		return nil, errSessionEnded
	}
	defer c.leave()
	msgs, err := c.inner.Receive(ctx, req)
	c.received(op, addr, msgs, err)
	return msgs, err
}

// ReceiveDeferred locks deferred messages through the shared client and
// records the locks.
func (c *sessionClient) ReceiveDeferred(ctx context.Context, entity string, seqs []int64) ([]*broker.Message, error) {
	if !c.enter() {
		return nil, errSessionEnded
	}
	defer c.leave()
	msgs, err := c.inner.ReceiveDeferred(ctx, entity, seqs)
	if err != nil && len(msgs) == 0 {
		// Name what was asked for, since nothing came back.
		for _, s := range seqs {
			c.record("receive deferred", entity, s, "", err)
		}
		return msgs, err
	}
	c.received("receive deferred", entity, msgs, err)
	return msgs, err
}

// LockSequence locks messages by sequence number through the shared
// client (broker.SequenceLocker) and records and audits the locks, one line
// per message. It fails with broker.ErrNotSupported when the shared client
// cannot, and read-only sessions are refused by the read-only wrapper.
func (c *sessionClient) LockSequence(ctx context.Context, entity string, seqs []int64) ([]*broker.Message, error) {
	if !c.enter() {
		return nil, errSessionEnded
	}
	defer c.leave()
	sl, ok := broker.SequenceLockerOf(c.inner)
	if !ok {
		return nil, &broker.Error{Code: broker.CodeNotSupported, Message: "this endpoint cannot lock a message by its sequence number"}
	}
	msgs, err := sl.LockSequence(ctx, entity, seqs)
	if err != nil && len(msgs) == 0 {
		for _, s := range seqs {
			c.record("lock", entity, s, "", err)
		}
		return msgs, err
	}
	c.received("lock", entity, msgs, err)
	return msgs, err
}

// received audits and records the messages of a receive. A receive that
// finishes after the session closed gives its locks straight back.
func (c *sessionClient) received(op, addr string, msgs []*broker.Message, err error) {
	if len(msgs) == 0 {
		if err != nil {
			c.record(op, addr, 0, "", err)
		}
		return
	}
	var late []heldLock
	var lateTokens []broker.LockToken
	c.mu.Lock()
	for _, m := range msgs {
		if !m.Locked() {
			continue
		}
		h := heldLock{entity: addr, seq: m.SequenceNumber, messageID: m.MessageID}
		if c.closed {
			late = append(late, h)
			lateTokens = append(lateTokens, m.LockToken)
			continue
		}
		c.locks[m.LockToken] = h
	}
	c.mu.Unlock()
	for _, m := range msgs {
		c.record(op, addr, m.SequenceNumber, m.MessageID, nil)
	}
	if err != nil {
		// Part arrived, then the receive failed.
		c.record(op, addr, 0, "", err)
	}
	if len(late) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
		defer cancel()
		for i, h := range late {
			c.abandon(ctx, lateTokens[i], h)
		}
	}
}

// Settle settles through the shared client; a settled (or lost) lock is no
// longer the session's.
func (c *sessionClient) Settle(ctx context.Context, s broker.Settlement) error {
	if !c.enter() {
		return errSessionEnded
	}
	defer c.leave()
	c.mu.Lock()
	h, ok := c.locks[s.Token]
	c.mu.Unlock()
	if !ok {
		h = heldLock{entity: s.Entity}
	}
	err := c.inner.Settle(ctx, s)
	if err == nil || errors.Is(err, broker.ErrLockLost) {
		c.forget(s.Token)
	}
	attrs := []any{}
	if s.Kind == broker.DeadLetter {
		attrs = append(attrs, slog.String("reason", s.Reason), slog.String("description", s.Description))
	}
	c.record(s.Kind.String(), s.Entity, h.seq, h.messageID, err, attrs...)
	return err
}

// RenewLock renews through the shared client.
func (c *sessionClient) RenewLock(ctx context.Context, entity string, token broker.LockToken) (time.Time, error) {
	if !c.enter() {
		return time.Time{}, errSessionEnded
	}
	defer c.leave()
	c.mu.Lock()
	h := c.locks[token]
	c.mu.Unlock()
	until, err := c.inner.RenewLock(ctx, entity, token)
	if errors.Is(err, broker.ErrLockLost) {
		c.forget(token)
	}
	c.record("renew lock", entity, h.seq, h.messageID, err)
	return until, err
}

// Send sends through the shared client.
func (c *sessionClient) Send(ctx context.Context, entity string, msgs []*broker.Message) error {
	if !c.enter() {
		return errSessionEnded
	}
	defer c.leave()
	err := c.inner.Send(ctx, entity, msgs)
	for _, m := range msgs {
		c.record("send", entity, 0, m.MessageID, err)
	}
	return err
}

// SendResubmitted sends the copy of a resubmit through the shared client,
// which records where it came from when it keeps histories, and audits the
// send with the original and, when known, the copy's sequence number.
func (c *sessionClient) SendResubmitted(ctx context.Context, target string, m *broker.Message, dlq string, seq int64) (int64, error) {
	if !c.enter() {
		return 0, errSessionEnded
	}
	defer c.leave()
	var copySeq int64
	var err error
	if rr, ok := c.inner.(broker.ResubmitRecorder); ok {
		copySeq, err = rr.SendResubmitted(ctx, target, m, dlq, seq)
	} else {
		err = c.inner.Send(ctx, target, []*broker.Message{m})
	}
	extra := []any{slog.String("from", dlq), slog.Int64("from_seq", seq)}
	if copySeq != 0 {
		extra = append(extra, slog.Int64("copy_seq", copySeq))
	}
	c.record("send", target, 0, m.MessageID, err, extra...)
	return copySeq, err
}

// NoteResubmitted passes the note on a resubmit's original through to the
// shared client, when it keeps histories.
func (c *sessionClient) NoteResubmitted(ctx context.Context, dlq string, seq int64, target string, copySeq int64) error {
	if !c.enter() {
		return errSessionEnded
	}
	defer c.leave()
	if rr, ok := c.inner.(broker.ResubmitRecorder); ok {
		return rr.NoteResubmitted(ctx, dlq, seq, target, copySeq)
	}
	return nil
}

// Schedule schedules through the shared client.
func (c *sessionClient) Schedule(ctx context.Context, entity string, at time.Time, msgs []*broker.Message) ([]int64, error) {
	if !c.enter() {
		return nil, errSessionEnded
	}
	defer c.leave()
	seqs, err := c.inner.Schedule(ctx, entity, at, msgs)
	for i, m := range msgs {
		var seq int64
		if i < len(seqs) {
			seq = seqs[i]
		}
		c.record("schedule", entity, seq, m.MessageID, err, slog.Time("at", at))
	}
	return seqs, err
}

// CancelScheduled cancels through the shared client.
func (c *sessionClient) CancelScheduled(ctx context.Context, entity string, seqs []int64) error {
	if !c.enter() {
		return errSessionEnded
	}
	defer c.leave()
	err := c.inner.CancelScheduled(ctx, entity, seqs)
	for _, s := range seqs {
		c.record("cancel scheduled", entity, s, "", err)
	}
	return err
}

// Purge purges through the shared client.
func (c *sessionClient) Purge(ctx context.Context, entity string, sub broker.SubQueue) (int64, error) {
	if !c.enter() {
		return 0, errSessionEnded
	}
	defer c.leave()
	addr := auditAddress(entity, sub)
	n, err := c.inner.Purge(ctx, entity, sub)
	c.record("purge", addr, 0, "", err, slog.Int64("removed", n))
	return n, err
}

// Events opens a subscription of this session's own on the shared client;
// the session's end stops it if the caller has not.
func (c *sessionClient) Events() (<-chan broker.Event, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, func() {}
	}
	ch, stop := c.inner.Events()
	if ch == nil {
		return nil, func() {}
	}
	id := c.nextID
	c.nextID++
	var once sync.Once
	end := func() { once.Do(stop) }
	c.subs[id] = end
	return ch, func() {
		c.mu.Lock()
		delete(c.subs, id)
		c.mu.Unlock()
		end()
	}
}

// Close ends the session's view: it stops its event subscriptions,
// abandons every lock the session still holds and releases the session
// locks it accepted (a lock that is gone already is fine). The shared client stays open. Close is idempotent.
func (c *sessionClient) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()

	// Calls in flight finish first: a receive that returns now gives its
	// locks back itself (see received). Bounded, like the releases below.
	waited := make(chan struct{})
	go func() {
		c.inflight.Wait()
		close(waited)
	}()
	select {
	case <-waited:
	case <-time.After(releaseTimeout):
	}

	c.mu.Lock()
	locks, subs, sessions := c.locks, c.subs, c.held
	c.locks, c.subs, c.held = nil, nil, nil
	c.mu.Unlock()

	for _, stop := range subs {
		stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	for tok, h := range locks {
		c.abandon(ctx, tok, h)
	}
	c.releaseSessions(ctx, sessions)
	return nil
}

// abandon gives back a lock the session left behind, released: a viewer
// who left is not a failed delivery.
func (c *sessionClient) abandon(ctx context.Context, tok broker.LockToken, h heldLock) {
	err := c.inner.Settle(ctx, broker.Settlement{Kind: broker.Release, Entity: h.entity, Token: tok})
	if errors.Is(err, broker.ErrLockLost) {
		err = nil // expired or settled elsewhere: nothing to give back
	}
	c.record("release", h.entity, h.seq, h.messageID, err, slog.String("cause", "session ended"))
}

// forget drops a lock from the session's record.
func (c *sessionClient) forget(tok broker.LockToken) {
	c.mu.Lock()
	delete(c.locks, tok)
	c.mu.Unlock()
}

// heldLocks returns how many locks the session holds.
func (c *sessionClient) heldLocks() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.locks)
}

// record writes one audit line.
func (c *sessionClient) record(op, entity string, seq int64, messageID string, err error, extra ...any) {
	result, level := "ok", slog.LevelInfo
	if err != nil {
		result, level = err.Error(), slog.LevelWarn
	}
	attrs := append([]any{
		slog.String("op", op),
		slog.String("entity", entity),
		slog.Int64("seq", seq),
		slog.String("message_id", messageID),
		slog.String("result", result),
	}, extra...)
	c.audit.Log(context.Background(), level, "audit", attrs...)
}

// auditAddress is the address an operation on the sub-queue sub of entity
// touches, as the audit log names it; a sub-queue's suffix in entity wins.
func auditAddress(entity string, sub broker.SubQueue) string {
	if path, s := broker.SplitAddress(entity); s == broker.SubQueueMain {
		return broker.SubQueueAddress(path, sub)
	}
	return entity
}
