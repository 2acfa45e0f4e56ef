package broker

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// maxResubmitScan bounds how many dead-lettered messages a resubmit looks
// through, on an endpoint that cannot lock by sequence number, to find the
// chosen ones.
const maxResubmitScan = 5000

// deadLetterQueues are the dead-letter sub-queues, in the order resubmits
// go through them.
var deadLetterQueues = [...]SubQueue{SubQueueDeadLetter, SubQueueTransferDeadLetter}

// LockedAt is a message locked at an address: the dead-letter sub-queue
// it was received from, where it is settled.
type LockedAt struct {
	Address string
	Msg     *Message
}

// ResubmitSequencesOptions say which dead-lettered messages
// ResubmitSequences resubmits, and how.
type ResubmitSequencesOptions struct {
	// Held are messages the caller holds locked already: they are
	// resubmitted first, as they are.
	Held []LockedAt
	// Seqs are the sequence numbers of the other messages to resubmit.
	Seqs []int64
	// SeenIn is the sub-queue each message of Seqs was seen in, where
	// known; one not there is looked for in either.
	SeenIn map[int64]SubQueue
	// Concurrency bounds the locks and the completes in flight (0: 8); the
	// copies are sent one after the other, in sequence order.
	Concurrency int
	// Timeout bounds each broker call (0: 15 s).
	Timeout time.Duration
}

// lockChunk is how many chosen messages ResubmitSequences locks by
// sequence number before it resubmits them: the locks taken wait for their
// turn to be sent no longer than a chunk takes.
const lockChunk = 256

// ResubmitSequences resubmits the dead-lettered messages of entity with the
// given sequence numbers, from either dead-letter sub-queue, touching those
// messages only. Each is locked first: o.Held already are; the others are
// locked by sequence number where the endpoint can (SequenceLocker: the
// embedded engine), else received from the head of their dead-letter queue
// up to the last chosen one (see receiveUpTo), the others received on the
// way given back at once with Release, which counts no delivery. Then
// Resubmit sends each copy back and completes the original only after the
// copy is accepted. The copies go in the order of the sequence numbers
// (held and chosen together), one after the other.
//
// report is called once for every message, one call at a time, with the
// address it was locked at ("" when it could not be locked or found) and
// the outcome of its resubmit.
func ResubmitSequences(ctx context.Context, c Client, entity string, o ResubmitSequencesOptions, report func(seq int64, dlq string, err error)) {
	target := ResubmitTarget(entity)
	subOf := o.SeenIn
	ready, want := o.Held, o.Seqs
	n, timeout := o.Concurrency, o.Timeout
	if n <= 0 {
		n = 8
	}
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	var reportMu sync.Mutex
	done := func(seq int64, dlq string, err error) {
		reportMu.Lock()
		defer reportMu.Unlock()
		report(seq, dlq, err)
	}
	resubmit := func(its []LockedAt) {
		resubmitInOrder(ctx, c, its, target, n, timeout, func(it LockedAt, err error) {
			done(it.Msg.SequenceNumber, it.Address, err)
		})
	}
	held := slices.Clone(ready)
	slices.SortFunc(held, func(a, b LockedAt) int { return cmp.Compare(a.Msg.SequenceNumber, b.Msg.SequenceNumber) })
	// heldUpTo takes the held messages up to sequence number last (all of
	// them for -1) off held.
	heldUpTo := func(last int64) []LockedAt {
		i := 0
		for i < len(held) && (last < 0 || held[i].Msg.SequenceNumber <= last) {
			i++
		}
		out := held[:i]
		held = held[i:]
		return out
	}
	want = slices.Clone(want)
	slices.Sort(want)
	if sl, ok := SequenceLockerOf(c); ok && len(want) > 0 {
		var unsupported []int64
		for chunk := range slices.Chunk(want, lockChunk) {
			var mu sync.Mutex
			var locked []LockedAt
			type failure struct {
				seq int64
				err error
			}
			var failed []failure
			ForEach(ctx, n, chunk, func(s int64) {
				it, err := lockOne(ctx, sl, entity, s, subOf, timeout)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case errors.Is(err, ErrNotSupported):
					unsupported = append(unsupported, s)
				case err != nil:
					failed = append(failed, failure{s, err})
				default:
					locked = append(locked, it)
				}
			})
			resubmit(append(heldUpTo(chunk[len(chunk)-1]), locked...))
			for _, f := range failed {
				done(f.seq, "", f.err)
			}
		}
		want = unsupported
	}
	if len(want) == 0 {
		resubmit(heldUpTo(-1))
		return
	}
	// Receive from the head of the sub-queue each was seen in, up to
	// the chosen ones; one the pane did not see is looked for in the
	// dead-letter queue, then in the transfer one.
	var inDL, inTDL []int64
	unknown := map[int64]bool{}
	for _, s := range want {
		switch sub, ok := subOf[s]; {
		case ok && sub == SubQueueTransferDeadLetter:
			inTDL = append(inTDL, s)
		case !ok || sub == SubQueueMain:
			unknown[s] = true
			fallthrough
		default:
			inDL = append(inDL, s)
		}
	}
	var missing []int64
	var found []LockedAt
	look := func(sub SubQueue, ws []int64) []int64 {
		if len(ws) == 0 || ctx.Err() != nil {
			return ws
		}
		got, left, err := receiveUpTo(ctx, c, entity, sub, ws, timeout)
		found = append(found, got...)
		if err != nil {
			for _, s := range left {
				done(s, "", err)
			}
			return nil
		}
		return left
	}
	for _, s := range look(SubQueueDeadLetter, inDL) {
		if unknown[s] {
			inTDL = append(inTDL, s)
		} else {
			missing = append(missing, s)
		}
	}
	missing = append(missing, look(SubQueueTransferDeadLetter, inTDL)...)
	resubmit(append(heldUpTo(-1), found...))
	slices.Sort(missing)
	for _, s := range missing {
		err := Errorf(CodeMessageNotFound, "sequence number %d is not among the available messages of the dead-letter queues of %s (gone, or locked by another receiver)", s, entity)
		done(s, "", err)
	}
}

// lockOne locks dead-lettered message s of entity by its sequence number,
// in the sub-queue the pane saw it in, or else in either.
func lockOne(ctx context.Context, sl SequenceLocker, entity string, s int64, subOf map[int64]SubQueue, timeout time.Duration) (LockedAt, error) {
	subs := deadLetterQueues[:]
	if sub, ok := subOf[s]; ok && sub != SubQueueMain {
		subs = []SubQueue{sub}
	}
	var err error
	for _, sub := range subs {
		addr := SubQueueAddress(entity, sub)
		cctx, cancel := context.WithTimeout(ctx, timeout)
		var got []*Message
		got, err = sl.LockSequence(cctx, addr, []int64{s})
		cancel()
		if err == nil && len(got) == 1 {
			return LockedAt{Address: addr, Msg: got[0]}, nil
		}
		if err == nil {
			err = Errorf(CodeMessageNotFound, "sequence number %d: nothing locked", s)
		}
		if !errors.Is(err, ErrMessageNotFound) {
			return LockedAt{}, err
		}
	}
	return LockedAt{}, err
}

// receiveUpTo locks the messages of a dead-letter sub-queue of entity with
// the sequence numbers want, on an endpoint that can only receive from the
// head: it counts (by browsing) the messages up to the last of them,
// receives that many, and gives every other message it received back at
// once with Release, before the caller resubmits what was found.
// It returns what it found, under lock, and the numbers it did not find.
func receiveUpTo(ctx context.Context, c Client, entity string, sub SubQueue, want []int64, timeout time.Duration) (found []LockedAt, left []int64, err error) {
	addr := SubQueueAddress(entity, sub)
	last := slices.Max(want)
	wanted := make(map[int64]bool, len(want))
	for _, s := range want {
		wanted[s] = true
	}
	// How many messages are there up to the last chosen one?
	upTo := 0
	for from := int64(0); upTo < maxResubmitScan; {
		bctx, cancel := context.WithTimeout(ctx, timeout)
		page, err := c.Browse(bctx, BrowseRequest{Entity: addr, FromSequence: from, Max: 256})
		cancel()
		if err != nil {
			if errors.Is(err, ErrNotSupported) {
				upTo = maxResubmitScan // cannot count: take what it takes
				break
			}
			return nil, want, err
		}
		done := len(page) == 0
		for _, x := range page {
			if x.SequenceNumber > last {
				done = true
				break
			}
			upTo++
		}
		if done {
			break
		}
		from = page[len(page)-1].SequenceNumber + 1
	}
	var others []LockedAt
	defer func() {
		// Give back what is not ours to resubmit, now, without counting a
		// delivery.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		for _, it := range others {
			_ = c.Settle(rctx, Settlement{Kind: Release, Entity: it.Address, Token: it.Msg.LockToken})
		}
	}()
	taken := 0
	for len(wanted) > 0 && taken < max(upTo, len(want)) && ctx.Err() == nil {
		rctx, cancel := context.WithTimeout(ctx, timeout)
		got, err := c.Receive(rctx, ReceiveRequest{Entity: entity, SubQueue: sub, Mode: PeekLock,
			Max: min(max(upTo, len(want))-taken, maxReceiveBatch)})
		cancel()
		if err != nil {
			return found, sortedKeys(wanted), err
		}
		if len(got) == 0 {
			break
		}
		taken += len(got)
		past := false
		for _, x := range got {
			if wanted[x.SequenceNumber] {
				delete(wanted, x.SequenceNumber)
				found = append(found, LockedAt{Address: addr, Msg: x})
				continue
			}
			others = append(others, LockedAt{Address: addr, Msg: x})
			past = past || x.SequenceNumber > last
		}
		if past {
			break // beyond the last chosen one: the rest are gone or locked
		}
	}
	return found, sortedKeys(wanted), nil
}

// maxReceiveBatch is the most messages one receive of receiveUpTo asks
// for.
const maxReceiveBatch = 500

// sortedKeys returns the keys of set in order.
func sortedKeys(set map[int64]bool) []int64 {
	out := make([]int64, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}
