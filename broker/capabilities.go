package broker

// Capability is one thing an endpoint may or may not be able to do.
type Capability uint16

// Capabilities an endpoint may have.
const (
	CanBrowse       Capability = 1 << iota // non-destructive peek
	CanPeekLock                            // receive under a lock, settle later
	CanDefer                               // defer and receive deferred by sequence number
	CanDeadLetter                          // dead-letter with reason and description
	CanAbandon                             // abandon (modified outcome)
	CanRenewLock                           // renew a message lock
	CanSchedule                            // schedule and cancel
	CanPurge                               // purge an entity
	CanListEntities                        // list entities with counts
	CanSeeAllLocks                         // see locks held by other receivers
	CanEvents                              // push events
	CanSessions                            // session-aware entities
)

// AllCapabilities is everything; the embedded engine has it.
const AllCapabilities = CanBrowse | CanPeekLock | CanDefer | CanDeadLetter | CanAbandon |
	CanRenewLock | CanSchedule | CanPurge | CanListEntities | CanSeeAllLocks | CanEvents | CanSessions

// Capabilities says what an endpoint supports and, for what it does not, why.
type Capabilities struct {
	Has Capability
	// Why holds the reason a missing capability is missing, to show on screen.
	Why map[Capability]string
	// Warn holds a caution about a capability that works but not as on
	// Service Bus, to show before it is used (a generic broker drops a
	// dead-lettered message it has nowhere to put).
	Warn map[Capability]string
}

// Warning returns the caution about c ("" for none).
func (cs Capabilities) Warning(c Capability) string { return cs.Warn[c] }

// Supports reports whether every capability in c is present.
func (cs Capabilities) Supports(c Capability) bool { return cs.Has&c == c }

// Reason returns why c is missing ("" when present or unexplained).
func (cs Capabilities) Reason(c Capability) string {
	if cs.Supports(c) {
		return ""
	}
	if r, ok := cs.Why[c]; ok {
		return r
	}
	return "this endpoint does not support it"
}
