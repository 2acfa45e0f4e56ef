package remote

import (
	"context"
	"fmt"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/peeklock/peeklock/broker"
)

// Send sends messages to an entity and returns after the endpoint accepted
// every one. The transfers are pipelined on one link: all go out, then the
// outcomes are awaited. A rejected message fails the call with the
// endpoint's error (its tracking id kept); the messages before it may have
// been accepted, which the error says.
func (c *Client) Send(ctx context.Context, entity string, msgs []*broker.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	if entity == "" {
		return broker.Errorf(broker.CodeInvalid, "send: no entity given")
	}
	var address string
	if c.cfg.serviceBus() {
		path, sub := broker.SplitAddress(entity)
		if sub != broker.SubQueueMain {
			return broker.Errorf(broker.CodeInvalid, "send: messages cannot be sent to a %s (%s)", sub, entity)
		}
		address = path
	} else {
		address = c.genericAddress(entity, true)
	}
	ams := make([]*amqp.Message, len(msgs))
	for i, m := range msgs {
		am, err := toAMQP(m)
		if err != nil {
			return err
		}
		ams[i] = am
	}
	ctx, cancel := c.opCtx(ctx)
	defer cancel()
	cn, err := c.connFor("send", address)
	if err != nil {
		return err
	}
	sl, err := c.sender(ctx, cn, address)
	if err != nil {
		return mapErr(err, "send", address)
	}
	key := "send|" + lower(address)
	receipts := make([]amqp.SendReceipt, 0, len(ams))
	var sendErr error
	for _, am := range ams {
		r, err := sl.sender.SendWithReceipt(ctx, am, nil)
		if err != nil {
			sendErr = err
			break
		}
		receipts = append(receipts, r)
	}
	accepted := 0
	var firstErr error
	for i := range receipts {
		state, err := receipts[i].Wait(ctx)
		if err == nil {
			err = outcomeErr(state, address)
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		accepted++
	}
	if firstErr == nil {
		firstErr = sendErr
	}
	if firstErr == nil {
		return nil
	}
	if isLinkGone(firstErr) {
		c.dropLink(cn, key, sl)
	}
	err = mapErr(firstErr, "send", address)
	if be, ok := err.(*broker.Error); ok && len(msgs) > 1 {
		be.Message += fmt.Sprintf(" (%d of %d messages were accepted)", accepted, len(msgs))
	}
	return err
}

// outcomeErr returns the error of a send outcome other than accepted.
func outcomeErr(state amqp.DeliveryState, address string) error {
	switch s := state.(type) {
	case *amqp.StateAccepted:
		return nil
	case *amqp.StateRejected:
		if s.Error != nil {
			return fromCondition(s.Error.Condition, s.Error.Description, address, s.Error)
		}
		return &broker.Error{Code: broker.CodeUnknown, Message: "the endpoint rejected the message without saying why", Entity: address}
	case *amqp.StateReleased:
		return &broker.Error{Code: broker.CodeServerBusy, Message: "the endpoint released the message without storing it", Entity: address}
	case *amqp.StateModified:
		return &broker.Error{Code: broker.CodeServerBusy, Message: "the endpoint returned the message (modified) without storing it", Entity: address}
	}
	return &broker.Error{Code: broker.CodeUnknown, Message: fmt.Sprintf("unexpected send outcome %T", state), Entity: address}
}

// Schedule sends messages that become active at at, through the management
// node, and returns their sequence numbers (Service Bus only).
func (c *Client) Schedule(ctx context.Context, entity string, at time.Time, msgs []*broker.Message) ([]int64, error) {
	if !c.cfg.serviceBus() {
		return nil, notSupported(c.caps().Reason(broker.CanSchedule))
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	ctx, cancel := c.opCtx(ctx)
	defer cancel()
	return c.scheduleMessages(ctx, entityAddress(entity, broker.SubQueueMain), at, msgs)
}

// CancelScheduled cancels scheduled messages by sequence number (Service
// Bus only).
func (c *Client) CancelScheduled(ctx context.Context, entity string, seqs []int64) error {
	if !c.cfg.serviceBus() {
		return notSupported(c.caps().Reason(broker.CanSchedule))
	}
	if len(seqs) == 0 {
		return nil
	}
	ctx, cancel := c.opCtx(ctx)
	defer cancel()
	return c.cancelScheduled(ctx, entityAddress(entity, broker.SubQueueMain), seqs)
}
