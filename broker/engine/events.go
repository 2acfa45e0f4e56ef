package engine

import (
	"sync"
	"sync/atomic"

	"github.com/peeklock/peeklock/broker"
)

// hub fans events out to subscribers. Publishing never blocks: a subscriber
// whose channel is full loses the event, and the next event it does get
// carries the count in Event.Missed. With no subscriber, publishing costs one
// atomic load.
type hub struct {
	buffer int
	n      atomic.Int32
	mu     sync.RWMutex // a leaf of the lock order in engine.go, taken before subscriber.mu
	subs   []*subscriber
	closed bool
}

type subscriber struct {
	mu     sync.Mutex
	ch     chan broker.Event
	missed uint64
	closed bool
}

func (s *subscriber) send(ev broker.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	ev.Missed = s.missed
	select {
	case s.ch <- ev:
		s.missed = 0
	default:
		s.missed++
	}
}

func (s *subscriber) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.ch)
	}
}

func (h *hub) active() bool { return h.n.Load() != 0 }

func (h *hub) publish(ev broker.Event) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, s := range h.subs {
		s.send(ev)
	}
}

func (h *hub) subscribe() (<-chan broker.Event, func()) {
	s := &subscriber{ch: make(chan broker.Event, h.buffer)}
	if !h.add(s) {
		s.close()
		return s.ch, func() {}
	}
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			h.remove(s)
			s.close()
		})
	}
}

// add adds s to the subscribers; false when the hub is closed.
func (h *hub) add(s *subscriber) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.subs = append(h.subs, s)
	h.n.Store(int32(len(h.subs)))
	return true
}

// remove takes s out of the subscribers.
func (h *hub) remove(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, x := range h.subs {
		if x == s {
			h.subs = append(h.subs[:i], h.subs[i+1:]...)
			break
		}
	}
	h.n.Store(int32(len(h.subs)))
}

// close closes the hub and returns the subscribers it had.
func (h *hub) close() []*subscriber {
	h.mu.Lock()
	defer h.mu.Unlock()
	subs := h.subs
	h.subs = nil
	h.closed = true
	h.n.Store(0)
	return subs
}

func (h *hub) closeAll() {
	for _, s := range h.close() {
		s.close()
	}
}

// Events subscribes to the engine's event stream. Each subscriber has its own
// bounded channel (Options.EventBuffer); a subscriber that falls behind loses
// events and learns how many from Event.Missed. The returned function ends
// the subscription and closes the channel; Close ends them all.
func (e *Engine) Events() (<-chan broker.Event, func()) {
	return e.events.subscribe()
}

// emit counts an event about message x (see entity.tally) and publishes it
// with x's lock token.
func (en *entity) emit(kind broker.EventKind, x *entry, reason string) {
	en.count(kind)
	if !en.eng.events.active() {
		return
	}
	en.publish(kind, x, x.token, reason)
}

// emitToken counts an event about message x and publishes it with the given
// lock token.
func (en *entity) emitToken(kind broker.EventKind, x *entry, token broker.LockToken, reason string) {
	en.count(kind)
	if !en.eng.events.active() {
		return
	}
	en.publish(kind, x, token, reason)
}

// publish publishes an event about message x.
func (en *entity) publish(kind broker.EventKind, x *entry, token broker.LockToken, reason string) {
	en.eng.events.publish(broker.Event{
		Kind:      kind,
		Time:      en.eng.clock.Now(),
		Entity:    en.path,
		SubQueue:  x.sub,
		Sequence:  x.seq,
		MessageID: x.msgID,
		Token:     token,
		Reason:    reason,
	})
}

// emitEntity publishes an event about the entity itself.
func (e *Engine) emitEntity(kind broker.EventKind, path string, sub broker.SubQueue, reason string) {
	if !e.events.active() {
		return
	}
	e.events.publish(broker.Event{Kind: kind, Time: e.clock.Now(), Entity: path, SubQueue: sub, Reason: reason})
}

// emitSession publishes an event about a session lock.
func (en *entity) emitSession(kind broker.EventKind, id string, token broker.LockToken, reason string) {
	if !en.eng.events.active() {
		return
	}
	en.eng.events.publish(broker.Event{Kind: kind, Time: en.eng.clock.Now(), Entity: en.path, Token: token, Reason: reason})
}
