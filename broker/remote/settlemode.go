package remote

import (
	"context"
	"regexp"

	"github.com/Azure/go-amqp"

	"github.com/peeklock/peeklock/broker"
)

// settleModeMismatch matches go-amqp's (v1.7) error when the broker answers
// an attach with another sender settle mode than the one requested.
var settleModeMismatch = regexp.MustCompile(`amqp: sender settlement mode "(\w+)" requested, received "(\w+)" from server`)

// answeredSettleMode returns the sender settle mode a broker answered in a
// failed attach, or "" when err is not such a mismatch.
func answeredSettleMode(err error) string {
	if err == nil {
		return ""
	}
	if m := settleModeMismatch.FindStringSubmatch(err.Error()); m != nil {
		return m[2]
	}
	return ""
}

// attachReceiver attaches a receiver with opts. A generic broker may answer
// the requested sender settle mode with another (go-amqp then detaches and
// fails); the receiver is then attached again accepting the broker's mode
// when that mode still serves the receive:
//
//   - peek-lock asks for unsettled deliveries; "mixed" is accepted (the
//     broker sends unsettled deliveries to a receiver that settles them),
//     "settled" is refused: every delivery would leave the queue on arrival,
//     and the dashboard's lock would be a lie;
//   - receive-and-delete asks for settled deliveries; "unsettled" and
//     "mixed" are accepted, and the receive accepts each delivery that
//     arrives unsettled (Receive).
func attachReceiver(ctx context.Context, attach func(context.Context, *amqp.ReceiverOptions) (*amqp.Receiver, error),
	opts *amqp.ReceiverOptions, mode broker.ReceiveMode) (*amqp.Receiver, error) {
	r, err := attach(ctx, opts)
	answered := answeredSettleMode(err)
	if answered == "" || opts.RequestedSenderSettleMode == nil {
		return r, err
	}
	if mode == broker.PeekLock && answered == "settled" {
		return nil, &broker.Error{Code: broker.CodeNotSupported, Err: err,
			Message: "the broker sends this address's messages settled (at most once): it cannot lock them; a peek-lock is not possible here"}
	}
	again := *opts
	again.RequestedSenderSettleMode = nil // take the broker's answer
	return attach(ctx, &again)
}
