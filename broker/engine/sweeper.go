package engine

import (
	"container/heap"
	"sync"
	"time"
)

// sweeper is the one goroutine that processes deadlines of idle entities: it
// sleeps on the clock until the earliest registered deadline and is woken
// early when an earlier one is registered. Entities register their next
// deadline after every operation (entity.scheduleNext); stale registrations
// are harmless (processing an entity with nothing due costs O(log n)).
type sweeper struct {
	mu   sync.Mutex // a leaf of the lock order in engine.go
	h    deadlines
	next int64         // the deadline the loop sleeps until; 0: none
	wake chan struct{} // capacity 1
}

type deadline struct {
	at int64
	en *entity
}

type deadlines []deadline

func (d deadlines) Len() int           { return len(d) }
func (d deadlines) Less(i, j int) bool { return d[i].at < d[j].at }
func (d deadlines) Swap(i, j int)      { d[i], d[j] = d[j], d[i] }
func (d *deadlines) Push(x any)        { *d = append(*d, x.(deadline)) }
func (d *deadlines) Pop() any {
	old := *d
	x := old[len(old)-1]
	old[len(old)-1] = deadline{}
	*d = old[:len(old)-1]
	return x
}

func (s *sweeper) init() { s.wake = make(chan struct{}, 1) }

// register asks for en to be processed at (unix ns).
func (s *sweeper) register(en *entity, at int64) {
	if s.push(en, at) {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// push adds the deadline and reports whether it is the earliest.
func (s *sweeper) push(en *entity, at int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	heap.Push(&s.h, deadline{at: at, en: en})
	early := s.next == 0 || at < s.next
	if early {
		s.next = at
	}
	return early
}

// takeDue pops the entities due at now and returns the next deadline.
func (s *sweeper) takeDue(now int64, due []*entity) ([]*entity, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.h) > 0 && s.h[0].at <= now {
		d := heap.Pop(&s.h).(deadline)
		due = append(due, d.en)
	}
	s.next = 0
	if len(s.h) > 0 {
		s.next = s.h[0].at
	}
	return due, s.next
}

// timerSlack is how late a Go timer can fire in a process with nothing
// else to do: the runtime then waits in the kernel with a timeout in whole
// milliseconds, so a timer fires up to a millisecond after its time (p50
// 0.56 ms, p99 1.1 ms on the workplace VM). On the real clock the sweeper
// wakes that much early and sleeps the rest in one system call
// (preciseSleep: p50 0.11 ms, p99 0.24 ms late there). That took the
// lateness of BenchmarkLockExpiryLateness from p50 1.0 ms, p99 2.3 ms to
// p50 0.47 ms, p99 1.6 ms (medians of 5 alternating runs). A deadline
// registered during that sleep, and Close, wait at most a millisecond.
const timerSlack = time.Millisecond

// clockMoved is how far the clock may move between the sweeper reading it
// and arming its timer before the timer is armed again: a timer counts
// from when it is armed, so a step of the clock in between would make it
// fire that much late.
const clockMoved = time.Millisecond

func (e *Engine) sweepLoop() {
	defer e.wg.Done()
	var due []*entity
	for {
		now := e.now()
		var next int64
		due, next = e.sweep.takeDue(now, due[:0])
		if len(due) > 0 {
			e.sweepEntities(due, now)
			clear(due)
			continue
		}
		var timer <-chan time.Time
		var stop func() bool
		if next != 0 {
			wait := time.Duration(next - now)
			if e.preciseWake {
				if wait <= timerSlack {
					preciseSleep(wait)
					continue
				}
				wait -= timerSlack
			}
			t := e.clock.NewTimer(wait)
			timer, stop = t.Chan(), t.Stop
			if e.now()-now >= int64(clockMoved) {
				// The clock moved between reading it and arming the
				// timer (a fake clock stepped by a test, or this
				// goroutine was descheduled): the timer counts from
				// the later time and would fire late. Arm it again.
				stop()
				continue
			}
		}
		select {
		case <-e.sweep.wake:
		case <-timer:
		case <-e.done:
			if stop != nil {
				stop()
			}
			return
		}
		if stop != nil {
			stop()
		}
	}
}

// sweepEntities processes what is due in each entity, and then deletes
// those idle for their AutoDeleteOnIdle.
func (e *Engine) sweepEntities(due []*entity, now int64) {
	var idle []*entity
	for _, en := range due {
		_ = e.withLocked(en, func() error { // a deleted entity is skipped
			if en.registered <= now {
				en.registered = 0
			}
			t := e.now()
			en.processDue(t)
			if d := en.idleDeadline(); d != 0 && d <= t {
				idle = append(idle, en)
			}
			return nil
		})
	}
	if len(idle) > 0 && e.enter() == nil {
		e.deleteIdle(idle)
		e.leave()
	}
}
