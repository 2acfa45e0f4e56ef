package engine

import (
	"context"
	"time"
)

// waiter is one receive blocked until a message may be available.
type waiter struct {
	ch chan struct{} // capacity 1: a wake-up is never lost and never blocks
}

// waitList holds blocked receivers in arrival order. It is guarded by the
// mutex of the entity that owns it.
type waitList struct {
	list []*waiter
}

func (w *waitList) add() *waiter {
	x := &waiter{ch: make(chan struct{}, 1)}
	w.list = append(w.list, x)
	return x
}

// remove takes x out of the list; false means x was already woken.
func (w *waitList) remove(x *waiter) bool {
	for i, y := range w.list {
		if y == x {
			copy(w.list[i:], w.list[i+1:])
			w.list[len(w.list)-1] = nil
			w.list = w.list[:len(w.list)-1]
			return true
		}
	}
	return false
}

// wake wakes up to n waiters, oldest first.
func (w *waitList) wake(n int) {
	for n > 0 && len(w.list) > 0 {
		x := w.list[0]
		copy(w.list, w.list[1:])
		w.list[len(w.list)-1] = nil
		w.list = w.list[:len(w.list)-1]
		select {
		case x.ch <- struct{}{}:
		default:
		}
		n--
	}
}

func (w *waitList) wakeAll() { w.wake(len(w.list)) }

func (w *waitList) empty() bool { return len(w.list) == 0 }

// waitResult says why a wait ended.
type waitResult uint8

const (
	waitWoken waitResult = iota
	waitTimeout
	waitCancelled
	waitClosed
)

// deadlineTimer is a clock timer for a receive's MaxWait, created once per
// receive and stopped when it returns.
type deadlineTimer struct {
	c    <-chan time.Time
	stop func() bool
}

func (e *Engine) newDeadline(d time.Duration) deadlineTimer {
	t := e.clock.NewTimer(d)
	return deadlineTimer{c: t.Chan(), stop: t.Stop}
}

// block waits on x after the entity mutex was released. When the wait ends
// otherwise (deadline, ctx, Close), giveUp runs: under the entity mutex it
// takes x off its list, and when x had been woken meanwhile it passes the
// wake-up on, so that an available message is never left without a taker.
func (e *Engine) block(ctx context.Context, x *waiter, dt deadlineTimer, giveUp func()) waitResult {
	var r waitResult
	select {
	case <-x.ch:
		return waitWoken
	case <-dt.c:
		r = waitTimeout
	case <-ctx.Done():
		r = waitCancelled
	case <-e.done:
		r = waitClosed
	}
	giveUp()
	return r
}
