package engine

import "github.com/peeklock/peeklock/broker"

// DropOwner gives back the session locks that owner holds, as when a
// listener connection goes away (SSH sessions share owner 0 and keep track
// of their own session locks, see sshserver); the message locks of
// those sessions are lost with them (a failed delivery). Its other message
// locks stay until they expire or are settled: a client may settle them by
// lock token from another connection (Service Bus's backup settlement).
// Owner 0, the engine's own broker.Client, is never dropped: its locks end
// with their expiry or with Close.
func (e *Engine) DropOwner(owner uint64) {
	if e.enter() != nil {
		return
	}
	defer e.leave()
	for en := range e.takeOwner(owner) {
		_ = e.withDue(en, func(now int64) error { // a deleted entity has nothing to give back
			en.dropOwner(owner, now)
			return nil
		})
	}
}

// takeOwner removes owner from the registry and returns the entities where
// it holds locks.
func (e *Engine) takeOwner(owner uint64) map[*entity]struct{} {
	e.ownersMu.Lock()
	defer e.ownersMu.Unlock()
	set := e.owners[owner]
	delete(e.owners, owner)
	return set
}

// dropOwner is DropOwner's work in one entity, under its mutex.
func (en *entity) dropOwner(owner uint64, now int64) {
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
	en.commitQuiet()
}
