package engine

import "github.com/peeklock/peeklock/broker"

// DropOwner loses every lock that owner holds, message locks and session
// locks, as when a listener connection or an SSH session goes away. The
// messages are available again at once; their deliveries were counted at
// hand-out, so one that has reached MaxDeliveryCount goes to the dead-letter
// sub-queue. Owner 0, the engine's own broker.Client, is never dropped: its
// locks end with their expiry or with Close.
func (e *Engine) DropOwner(owner uint64) {
	if e.enter() != nil {
		return
	}
	defer e.leave()
	e.ownersMu.Lock()
	set := e.owners[owner]
	delete(e.owners, owner)
	e.ownersMu.Unlock()
	for en := range set {
		now, err := e.lockedDue(en)
		if err != nil {
			continue
		}
		delete(en.owners, owner)
		var sessions []*session
		for _, s := range en.sessions {
			if s.isLocked() && s.owner == owner {
				sessions = append(sessions, s)
			}
		}
		for _, s := range sessions {
			en.loseSession(s, now, broker.EventLockLost, "session lock of "+quoteID(s.id)+" lost: its owner went away")
		}
		var xs []*entry
		en.lockAt.Scan(func(x *entry) bool {
			if x.owner == owner {
				xs = append(xs, x)
			}
			return true
		})
		for _, x := range xs {
			en.release(x, now, broker.EventLockLost, nil)
		}
		en.commitQuiet()
		e.unlock(en)
	}
}
