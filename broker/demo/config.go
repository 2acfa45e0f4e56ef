package demo

import (
	"time"

	"github.com/peeklock/peeklock/broker"
)

// Mix is the share of each outcome a consumer chooses; the weights need not
// add up to anything in particular.
type Mix struct {
	Complete   int
	Abandon    int
	Expire     int // do nothing: the lock runs out
	DeadLetter int
	Defer      int
}

func (m Mix) total() int { return m.Complete + m.Abandon + m.Expire + m.DeadLetter + m.Defer }

// Workload is the simulated traffic on one entity.
type Workload struct {
	// Entity is the path to send to; Receive is where consumers receive
	// from (the entity itself, or a subscription of a topic).
	Entity  string
	Receive []string
	// Rate is messages produced per second (0: none).
	Rate float64
	// Consumers is the number of concurrent consumers per receive path.
	Consumers int
	// Processing is how long a consumer works on a message before settling:
	// uniformly between the two.
	Processing [2]time.Duration
	Mix        Mix
	// Scheduled is the share (0..1) of sent messages scheduled a little
	// into the future.
	Scheduled float64
	// MaxBacklog, when above 0, pauses the producer while a receive path
	// holds that many messages waiting (active or scheduled), so a demo left
	// running settles at a readable depth instead of growing without end.
	MaxBacklog int64
	// MaxDeadLettered, when above 0, bounds each receive path's dead-letter
	// queues (the transfer one included): a janitor removes the oldest
	// dead-lettered messages beyond it, as an operator would, so a demo
	// left running shows a readable dead-letter queue instead of one that
	// grows without end.
	MaxDeadLettered int64
	// Sessions, when above 0, spreads the messages over that many sessions
	// (the entity must require sessions); consumers then take a session's
	// lock, work through a few of its messages and give it back.
	Sessions int
}

// Config is a whole demo: the entities to create and the traffic to run.
type Config struct {
	Entities  []broker.Entity
	Workloads []Workload
}

// demoBacklog is the default demo's MaxBacklog: its producers send faster
// than its consumers settle, which fills the panes within a minute, and this
// holds each queue near a screenful from then on.
const demoBacklog = 40

// demoDeadLettered is the default demo's MaxDeadLettered: enough to scroll
// through and resubmit from, never hundreds.
const demoDeadLettered = 25

// DefaultConfig is the demo `peeklock` runs without --config: short lock
// durations (10 s) and low maximum delivery counts, so lock expiry,
// redelivery and dead-lettering happen on screen within a minute; a topic
// with a correlation and a SQL subscription rule; and a session-aware queue
// whose consumer works session by session.
func DefaultConfig() Config {
	short := broker.EntitySettings{LockDuration: 10 * time.Second, MaxDeliveryCount: 3}
	return Config{
		Entities: []broker.Entity{
			{Path: "orders", Kind: broker.KindQueue, Settings: short},
			{Path: "payments", Kind: broker.KindQueue, Settings: broker.EntitySettings{
				LockDuration: 10 * time.Second, MaxDeliveryCount: 5,
				DefaultMessageTimeToLive: 5 * time.Minute, DeadLetteringOnMessageExpiration: true}},
			{Path: "events", Kind: broker.KindTopic},
			{Path: broker.SubscriptionPath("events", "audit"), Kind: broker.KindSubscription, Settings: short},
			{Path: broker.SubscriptionPath("events", "billing"), Kind: broker.KindSubscription, Settings: short,
				Rules: []broker.Rule{{Name: "billing-only", Filter: &broker.CorrelationFilter{Subject: "invoice.created"}}}},
			{Path: broker.SubscriptionPath("events", "large"), Kind: broker.KindSubscription, Settings: short,
				Rules: []broker.Rule{{Name: "large-amounts", SQL: "amount > 300 AND sys.Label <> 'user.signed-up'",
					Action: "SET priority = 'high'"}}},
			{Path: "carts", Kind: broker.KindQueue, Settings: broker.EntitySettings{
				LockDuration: 10 * time.Second, MaxDeliveryCount: 3, RequiresSession: true}},
		},
		Workloads: []Workload{
			{Entity: "orders", Receive: []string{"orders"}, Rate: 2, Consumers: 2,
				Processing: [2]time.Duration{500 * time.Millisecond, 3 * time.Second},
				Mix:        Mix{Complete: 60, Abandon: 10, Expire: 15, DeadLetter: 5, Defer: 10}, Scheduled: 0.1,
				MaxBacklog: demoBacklog, MaxDeadLettered: demoDeadLettered},
			{Entity: "payments", Receive: []string{"payments"}, Rate: 1, Consumers: 1,
				Processing: [2]time.Duration{time.Second, 4 * time.Second},
				Mix:        Mix{Complete: 50, Abandon: 20, Expire: 25, DeadLetter: 5}, MaxBacklog: demoBacklog,
				MaxDeadLettered: demoDeadLettered},
			{Entity: "events", Receive: []string{broker.SubscriptionPath("events", "audit"), broker.SubscriptionPath("events", "billing"),
				broker.SubscriptionPath("events", "large")},
				Rate: 1.5, Consumers: 1, Processing: [2]time.Duration{200 * time.Millisecond, 2 * time.Second},
				Mix: Mix{Complete: 70, Expire: 20, DeadLetter: 10}, MaxBacklog: demoBacklog, MaxDeadLettered: demoDeadLettered},
			{Entity: "carts", Receive: []string{"carts"}, Rate: 1, Consumers: 1, Sessions: 4,
				Processing: [2]time.Duration{300 * time.Millisecond, 2 * time.Second},
				Mix:        Mix{Complete: 75, Abandon: 10, Expire: 5, DeadLetter: 5, Defer: 5}, MaxBacklog: demoBacklog,
				MaxDeadLettered: demoDeadLettered},
		},
	}
}
