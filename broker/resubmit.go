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

// sendCopy is Resubmit's first half: it sends the copy of m to target and,
// when that fails, gives the original back.
func sendCopy(ctx context.Context, c Client, dlq string, m *Message, target string) error {
	if !m.Locked() {
		return Errorf(CodeInvalid, "resubmit needs the dead-lettered message locked (sequence number %d)", m.SequenceNumber)
	}
	if err := c.Send(WithResubmitOf(ctx, dlq, m.SequenceNumber), target, []*Message{m.CopyForSend()}); err != nil {
		// Give the original back; its lock may be gone already, which is fine.
		_ = c.Settle(context.WithoutCancel(ctx), Settlement{Kind: Abandon, Entity: dlq, Token: m.LockToken})
		return fmt.Errorf("resubmit of sequence number %d: send to %q failed, original kept: %w", m.SequenceNumber, target, err)
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
