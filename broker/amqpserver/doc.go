// Package amqpserver is peeklock's AMQP 1.0 listener: it puts the embedded
// engine on the network with the Service Bus dialect of AMQP 1.0 (its
// vocabulary is package broker/sbamqp), so that the official Service Bus SDKs
// (and generic AMQP 1.0 clients) work against it unchanged.
//
// # Connections
//
// A connection starts with the SASL layer (ANONYMOUS, or PLAIN with a
// configured key name and key) or directly with the AMQP header, then opens,
// and carries many sessions, each with many links. Every connection has one
// goroutine that reads and handles frames in order and one that writes them
// from a queue (and sends heartbeats at half the peer's idle timeout); a
// watchdog closes a connection whose peer stays silent past the
// listener's idle timeout. Link work that may wait (receiving from the
// engine, storing sends, settling, management operations, giving a session
// lock back on a detach) runs in goroutines bounded by link credit, and
// the reader itself only reads snapshots of the engine (an attach
// resolves its entity with engine.EntityShape, which takes no entity mutex
// and reads no store), so the reader never waits on an entity or the
// store: a slow store read of one entity does not hold up the frames of
// the connection's other links.
//
// Lock order: a session's mutex (which also guards its links), then the
// connection's reply/session-link table or its token grants, then the
// engine's own locks; the writer's queue mutex is a leaf under all of them.
// Queueing a frame never waits, so frames are queued under a session's
// mutex, in the order of its state, but never written or waited on there:
// a deliverer waits for room in the connection's delivery budget before it
// locks, and the reader never waits on a peer that reads slowly (a peer
// that lets other frames pile up past a few MiB is disconnected).
//
// A connection must authenticate, with SASL PLAIN and a configured key or
// with a valid token put on $cbs, within Options.AuthTimeout, or it is
// closed with amqp:unauthorized-access. Until then it may attach only the
// $cbs link pair and hold a few sessions and links; connections not yet
// authenticated have their own cap (Options.MaxUnauthenticated), beyond
// which the oldest of them is closed, so that peers without a key never
// take the slots of real clients.
//
// What a peer chose (link names, addresses, descriptions, tokens'
// audiences) reaches the log shortened and escaped (internal/logsafe), and
// the lines a peer can cause again and again (refused links and tokens, its
// own errors, refused connections) have a budget per connection: a burst,
// then one line every few seconds, with a count of the lines held back.
//
// Malformed input closes that connection with amqp:decode-error (or
// amqp:connection:framing-error for frame-level faults); a panic in a
// connection is recovered, logged and closes only that connection. Memory
// per connection is bounded by the limits in Options.
//
// # Locks
//
// Each connection is an engine owner: message and session locks taken
// through it are lost (engine.DropOwner) when it closes or drops.
//
// # Service Bus dialect
//
// The $cbs node takes put-token requests and validates SAS tokens (expiry,
// signature, audience) and that the entity the audience names exists (404
// otherwise, as Service Bus answers); links to entities and their
// $management nodes are refused with amqp:unauthorized-access unless a
// valid token covers them. A connection has at most one sender and one
// receiver attached to $cbs; another is refused with amqp:not-allowed.
// The $management node answers the request/response operations of the
// dialect (locks, peek, deferred messages, dispositions, scheduling,
// sessions). Engine errors become AMQP conditions and management status
// codes through one table (conditions.go).
package amqpserver
