// Package engine is peeklock's embedded broker: Azure Service Bus's message
// semantics (entities, sequence numbers,
// peek-lock and settlement, lock expiry, dead-lettering, time to live,
// scheduling, duplicate detection, sessions, topics and auto-forwarding) over
// a store.Store, behind the broker.Client contract.
//
// Every queue and subscription has two sub-queues besides its main queue:
// the dead-letter sub-queue, and the transfer dead-letter sub-queue, which
// keeps messages the entity accepted but could not auto-forward (see
// transfer.go). A send straight to an entity whose forward fails fails
// instead: nothing was accepted.
//
// A send to a topic is all or nothing across the topic's subscriptions that
// store it: one store batch holds every subscription's copies, so that a
// refusal or a crash leaves the message in all of them or in none (see
// sendTopic in fanout.go). A forwarding subscription passes its copies on
// after that batch, as a second step.
//
// # Model
//
// The store holds every message twice: a small Meta record and the full
// message. The engine keeps, per entity, a compact index entry per message
// (sequence number, state, delivery count, times, size, session and message
// id) in ordered trees, one per category, so that receiving, settling and
// browsing a window cost O(log n) and never scan an entity. Bodies stay in the
// store and are read with Store.Bodies when messages are handed out or
// browsed.
//
// A stored message is never changed: the stores hand out the message a
// batch put, and the engine hands it on to receivers as it is
// (ReceiveDeliveries: a broker.Delivery holds it beside its delivery's own
// fields), while a listener encodes it without a lock. A change of a
// message (properties modified by an abandon, a deferral or a
// dead-lettering, a move to a sub-queue) stores a new message in its place
// (see rewriteTo); the state and delivery count that change with every
// delivery live in the index and the Meta record. TestDeliveriesNeverChange
// checks this.
//
// Locks are volatile, as in Service Bus: they live only in the index. A lock
// is held under an owner id (a listener connection; 0 is the engine's own
// broker.Client, which the dashboard and every SSH session share), and
// DropOwner gives back the session locks of an owner.
//
// # Time
//
// All time comes from a clockwork.Clock. Every operation on an entity first
// processes what is due at Clock.Now() (lock expiry, scheduled activation,
// time to live), and one sweeper goroutine sleeps until the earliest deadline
// across all entities so that events flow for idle entities too. With a fake
// clock, tests Advance it and then call any operation, or Tick.
//
// Entities carry the clock's times as Service Bus reports them: CreatedAt,
// UpdatedAt (settings, user metadata or rules changed) and each rule's
// CreatedAt are stored; AccessedAt (the last send or receive request, to
// the second) lives in memory only, one atomic word per entity that is
// written at most once a second, so that it costs the hot paths nothing.
//
// # Status and auto-delete
//
// An entity's Status is enforced as Service Bus does, with its
// com.microsoft:entity-disabled condition (broker.CodeEntityDisabled): a
// Disabled or SendDisabled entity refuses sends (forwards to it included),
// a Disabled or ReceiveDisabled one refuses receives, settlements and lock
// renewals (not peeks), and a Disabled topic's subscriptions refuse them
// too; a topic's fan-out reaches its subscriptions whatever their status.
// An entity idle for its AutoDeleteOnIdle (no send, receive, settlement,
// session operation, cancel or update; for a topic, none on its
// subscriptions either) is deleted by the sweeper. Idleness is kept in
// memory beside AccessedAt and counts from the start after a restart.
//
// # Message histories
//
// Every stored message has a history (History, broker.HistoryReader): who
// sent it (the actor of the handle called: New's names the dashboard, and
// As makes one for another caller; the listener names the connection,
// container and link) and from where (fan-out, forward, resubmit, the last
// through SendResubmitted), each hand-out with its lock, renewals,
// abandons with the properties changed, lock expiries and losses with why,
// deferral, dead-lettering (by a client or by the broker), resubmission
// (NoteResubmitted, a step of its own) and activation. Who did what reaches
// each locked step as a parameter (origin), never through the context or a
// field of the entity. The events are written to the store in the batch of the
// change they describe; a hand-out or renewal, which changes nothing else
// in the store, is held back until its message's next change, or cancelled
// by its completion (see historyLog.rider): a crash loses the held ones,
// which a clean close writes. Beside at most maxRiders held events per
// entity, the engine keeps only a 16-bit event count per message, so a
// history costs no memory beyond the store's; it is bounded (Options.HistoryLimit,
// the oldest folded into a count) and deleted with its message, and
// Options.NoHistory turns it off.
package engine
