package remote

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/Azure/go-amqp"

	"github.com/peeklock/peeklock/broker"
)

// fakeAttach answers the first attach with go-amqp's settle mode mismatch
// (the broker answering `answered`) and records the options of each.
type fakeAttach struct {
	answered string
	calls    []*amqp.ReceiverOptions
}

func (f *fakeAttach) attach(_ context.Context, o *amqp.ReceiverOptions) (*amqp.Receiver, error) {
	f.calls = append(f.calls, o)
	if o.RequestedSenderSettleMode != nil && f.answered != "" {
		// The text go-amqp v1.7.0 builds in link.setSettleModes.
		return nil, fmt.Errorf("amqp: sender settlement mode %q requested, received %q from server", o.RequestedSenderSettleMode, f.answered)
	}
	return nil, nil
}

// A broker that answers another sender settle mode is accepted where the
// receive still works: the receiver attaches again taking
// the broker's mode; a peek-lock answered "settled" is refused, and other
// attach errors are returned as they are.
func TestAttachReceiverAcceptsAnsweredSettleMode(t *testing.T) {
	for _, tc := range []struct {
		mode     broker.ReceiveMode
		asked    amqp.SenderSettleMode
		answered string
		attaches int
		refused  bool
	}{
		{broker.PeekLock, amqp.SenderSettleModeUnsettled, "mixed", 2, false},
		{broker.PeekLock, amqp.SenderSettleModeUnsettled, "settled", 1, true},
		{broker.ReceiveAndDelete, amqp.SenderSettleModeSettled, "unsettled", 2, false},
		{broker.ReceiveAndDelete, amqp.SenderSettleModeSettled, "mixed", 2, false},
		{broker.PeekLock, amqp.SenderSettleModeUnsettled, "", 1, false}, // honoured: one attach
	} {
		name := fmt.Sprintf("%s asked %v answered %q", modeName(tc.mode), tc.asked.Ptr(), tc.answered)
		f := &fakeAttach{answered: tc.answered}
		opts := &amqp.ReceiverOptions{Credit: -1, RequestedSenderSettleMode: tc.asked.Ptr()}
		_, err := attachReceiver(context.Background(), f.attach, opts, tc.mode)
		if len(f.calls) != tc.attaches {
			t.Errorf("%s: %d attaches, want %d", name, len(f.calls), tc.attaches)
		}
		if tc.refused {
			if !errors.Is(err, broker.ErrNotSupported) {
				t.Errorf("%s: %v, want a refusal", name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if last := f.calls[len(f.calls)-1]; tc.attaches == 2 && (last.RequestedSenderSettleMode != nil || last.Credit != -1) {
			t.Errorf("%s: the second attach asks %v (credit %d), want the broker's mode and the same options", name, last.RequestedSenderSettleMode, last.Credit)
		}
	}
	other := errors.New("amqp: link detached")
	_, err := attachReceiver(context.Background(), func(context.Context, *amqp.ReceiverOptions) (*amqp.Receiver, error) { return nil, other },
		&amqp.ReceiverOptions{RequestedSenderSettleMode: amqp.SenderSettleModeUnsettled.Ptr()}, broker.PeekLock)
	if !errors.Is(err, other) {
		t.Errorf("another attach error: %v", err)
	}
}

// Against RabbitMQ, which answers a receiver asking for "mixed" with
// "unsettled": go-amqp's real mismatch error is recognised and the receiver
// attaches on the second try, taking RabbitMQ's mode.
func TestRabbitAttachReceiverAnsweredSettleMode(t *testing.T) {
	c := dialRabbit(t)
	q := rabbitQueue(t, c, 1)
	ctx := context.Background()
	cn, err := c.connFor("attach", q)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := cn.amqp.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeQuietly(sess)
	var answered []string
	attach := func(ctx context.Context, o *amqp.ReceiverOptions) (*amqp.Receiver, error) {
		r, err := sess.NewReceiver(ctx, c.genericAddress(q, false), o)
		answered = append(answered, answeredSettleMode(err))
		return r, err
	}
	r, err := attachReceiver(ctx, attach, &amqp.ReceiverOptions{Credit: -1, SettlementMode: amqp.ReceiverSettleModeFirst.Ptr(),
		RequestedSenderSettleMode: amqp.SenderSettleModeMixed.Ptr()}, broker.PeekLock)
	if err != nil {
		t.Fatalf("attach: %v (answers %q)", err, answered)
	}
	if len(answered) != 2 || answered[0] != "unsettled" {
		t.Fatalf("answers %q, want a mismatch (unsettled), then an attach", answered)
	}
	if err := r.IssueCredit(1); err != nil {
		t.Fatal(err)
	}
	m, err := r.Receive(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.AcceptMessage(ctx, m); err != nil {
		t.Fatalf("accept on the receiver that took RabbitMQ's mode: %v", err)
	}
}
