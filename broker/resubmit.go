package broker

import (
	"context"
	"fmt"
)

// ResubmitTarget returns where a message in a dead-letter or transfer
// dead-letter sub-queue (entity is the sub-queue's address) goes back to: the
// entity itself, which forwards it again if it auto-forwards.
func ResubmitTarget(entity string) string {
	path, _ := SplitAddress(entity)
	return path
}

// Resubmit sends a copy of a dead-lettered message back to target and only
// then completes the original, which must be locked (received from the
// dead-letter or transfer dead-letter sub-queue whose address is dlq, under
// peek-lock). This order keeps the no-loss
// invariant: a failure before the copy is accepted leaves the
// original where it was (its lock is abandoned); a failure after it leaves a
// duplicate (same MessageId) in both places, never a gap.
func Resubmit(ctx context.Context, c Client, dlq string, m *Message, target string) error {
	if err := sendCopy(ctx, c, dlq, m, target); err != nil {
		return err
	}
	return completeOriginal(ctx, c, dlq, m, target)
}

// A ResubmitRecorder is a Client that keeps message histories (the embedded
// engine) and records both halves of a resubmit there: the copy says where
// it came from, and the original where its copy went. Resubmit uses it
// when c implements it, and a plain Send otherwise. A client that wraps
// another implements it when what it wraps might.
type ResubmitRecorder interface {
	// SendResubmitted sends m, the copy of message seq of the sub-queue
	// dlq, to target, and returns the sequence number it got there (0 when
	// it was dropped as a duplicate or the endpoint does not say).
	SendResubmitted(ctx context.Context, target string, m *Message, dlq string, seq int64) (int64, error)
	// NoteResubmitted records in the history of message seq of dlq that its
	// copy is message copySeq of target.
	NoteResubmitted(ctx context.Context, dlq string, seq int64, target string, copySeq int64) error
}

// sendCopy is Resubmit's first half: it sends the copy of m to target and,
// when that fails, gives the original back. When c records resubmits, the
// original's history is told where the copy went, before it is completed.
func sendCopy(ctx context.Context, c Client, dlq string, m *Message, target string) error {
	if !m.Locked() {
		return Errorf(CodeInvalid, "resubmit needs the dead-lettered message locked (sequence number %d)", m.SequenceNumber)
	}
	cp := []*Message{m.CopyForSend()}
	rr, records := c.(ResubmitRecorder)
	var copySeq int64
	var err error
	if records {
		copySeq, err = rr.SendResubmitted(ctx, target, cp[0], dlq, m.SequenceNumber)
	} else {
		err = c.Send(ctx, target, cp)
	}
	if err != nil {
		// Give the original back; its lock may be gone already, which is fine.
		_ = c.Settle(context.WithoutCancel(ctx), Settlement{Kind: Abandon, Entity: dlq, Token: m.LockToken})
		return fmt.Errorf("resubmit of sequence number %d: send to %q failed, original kept: %w", m.SequenceNumber, target, err)
	}
	if records && copySeq != 0 {
		// History only: the copy is accepted whatever becomes of the note.
		_ = rr.NoteResubmitted(ctx, dlq, m.SequenceNumber, target, copySeq)
	}
	return nil
}

// completeOriginal is Resubmit's second half, once the copy is accepted: it
// completes the original.
func completeOriginal(ctx context.Context, c Client, dlq string, m *Message, target string) error {
	if err := c.Settle(ctx, Settlement{Kind: Complete, Entity: dlq, Token: m.LockToken}); err != nil {
		return fmt.Errorf("resubmit of sequence number %d: copy sent to %q but the original could not be completed, so it is there twice (MessageId %q): %w",
			m.SequenceNumber, target, m.MessageID, err)
	}
	return nil
}
