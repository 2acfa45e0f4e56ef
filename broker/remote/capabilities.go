package remote

import "github.com/peeklock/peeklock/broker"

// Reasons for what remote endpoints cannot do, shown on screen.
const (
	whyNoOtherLocks = "a remote endpoint shows only the locks this dashboard holds"
	whyNoEvents     = "a remote endpoint has no event stream; the dashboard polls"

	whyGenericBrowse   = "generic AMQP 1.0 brokers cannot peek (RabbitMQ ignores the copy distribution mode)"
	whyGenericDefer    = "generic AMQP 1.0 has no deferral"
	whyGenericAbandon  = "RabbitMQ has no modified outcome (it ends the session); abandon gives the message back with release"
	whyGenericRenew    = "generic AMQP 1.0 locks do not expire: a held message stays held until settled or disconnected"
	whyGenericSchedule = "generic AMQP 1.0 has no scheduled messages"
	whyGenericList     = "a generic AMQP 1.0 broker has no entity list; only --entity names are shown"
	whyGenericSessions = "generic AMQP 1.0 has no Service Bus sessions"

	warnGenericDeadLetter = "a generic AMQP 1.0 broker dead-letters by rejecting: RabbitMQ drops the message unless " +
		"its queue has a dead-letter exchange (x-dead-letter-exchange); there is no dead-letter queue to resubmit from"
)

// Capabilities says what this endpoint supports: Service Bus endpoints do
// everything but show others' locks and push events; generic
// AMQP 1.0 brokers receive, accept, release and reject only.
func (c *Client) Capabilities() broker.Capabilities { return c.caps() }

func (c *Client) caps() broker.Capabilities {
	if c.cfg.serviceBus() {
		return broker.Capabilities{
			Has: broker.CanBrowse | broker.CanPeekLock | broker.CanDefer | broker.CanDeadLetter | broker.CanAbandon |
				broker.CanRenewLock | broker.CanSchedule | broker.CanPurge | broker.CanListEntities | broker.CanSessions,
			Why: map[broker.Capability]string{
				broker.CanSeeAllLocks: whyNoOtherLocks,
				broker.CanEvents:      whyNoEvents,
			},
		}
	}
	return broker.Capabilities{
		Has: broker.CanPeekLock | broker.CanDeadLetter | broker.CanPurge,
		Why: map[broker.Capability]string{
			broker.CanBrowse:       whyGenericBrowse,
			broker.CanDefer:        whyGenericDefer,
			broker.CanAbandon:      whyGenericAbandon,
			broker.CanRenewLock:    whyGenericRenew,
			broker.CanSchedule:     whyGenericSchedule,
			broker.CanListEntities: whyGenericList,
			broker.CanSeeAllLocks:  whyNoOtherLocks,
			broker.CanEvents:       whyNoEvents,
			broker.CanSessions:     whyGenericSessions,
		},
		Warn: map[broker.Capability]string{broker.CanDeadLetter: warnGenericDeadLetter},
	}
}
