package broker

import (
	"context"
	"time"
)

// ClientLister is implemented by clients that can list the connections of
// the applications using the broker: the embedded engine, when its AMQP
// listener is open. Remote endpoints do not implement it (Service Bus shows
// no clients). Use ClientsOf to find it through wrappers.
type ClientLister interface {
	// Clients returns a snapshot of the open connections, oldest first.
	// It fails with CodeNotSupported when no listener is open.
	Clients(ctx context.Context) ([]ClientConn, error)
}

// ClientConn is one connection to the listener.
type ClientConn struct {
	// ID names the connection in the listener's log (its owner id, hex).
	ID string
	// Remote is the peer's network address.
	Remote string
	// User is the SASL PLAIN user (a key name) or the key name of the last
	// shared access signature the connection put on $cbs; "" when neither.
	User string
	// ContainerID is the container id the client sent in its open frame.
	ContainerID string
	// ConnectedAt is when the connection was accepted.
	ConnectedAt time.Time
	// Authenticated reports whether the connection holds any right: a
	// configured key through SASL PLAIN, a token on $cbs, or anonymous
	// access when the listener allows it.
	Authenticated bool
	// Links are the connection's links to entities, in attach order.
	Links []ClientLink
}

// ClientLink is one link of a connection to an entity.
type ClientLink struct {
	// Name is the link name the client chose.
	Name string
	// Receiver is true for a link the client receives on (the listener
	// delivers), false for one it sends on.
	Receiver bool
	// Entity is the address the link is attached to ("q",
	// "t/Subscriptions/s", "q/$DeadLetterQueue").
	Entity string
	// Credit is the credit the link has now: deliveries the client allows
	// (receivers) or that the listener allows the client (senders).
	Credit uint32
	// Unsettled counts deliveries waiting for the client's outcome.
	Unsettled int
	// Moved counts the messages delivered (receivers) or received (senders)
	// on the link.
	Moved uint64
	// Waiting is the number of messages available in the entity (its
	// active messages, for a receiver), or 0 for a sender.
	Waiting int64
}

// Starved reports whether the link is a receiver with no credit while
// messages wait: the likely reason a consumer gets nothing.
func (l ClientLink) Starved() bool { return l.Receiver && l.Credit == 0 && l.Waiting > 0 }

// ClientsOf returns the ClientLister of c: c itself, or the first client
// down the chain of wrapped clients (Unwrapper) that implements it. ok is
// true only when a client that is not a wrapper implements it (a wrapper's
// own Clients only passes the call on). Listing clients changes nothing, so
// a read-only wrapper passes it through.
func ClientsOf(c Client) (cl ClientLister, ok bool) {
	return lookThrough[ClientLister](c, true)
}

// ClientCloser is implemented by clients that can close an application's
// connection: the embedded engine, when its AMQP listener is open. The
// listener sends the application a close with amqp:connection:forced and
// the reason in its description; as on any lost connection its session
// locks are given back and its message locks stay until they expire or are
// settled by lock token. The application may connect again. Use ClientCloserOf to find it through
// wrappers; the read-only wrapper refuses it.
type ClientCloser interface {
	// CloseClient closes the connection whose ClientConn.ID is id. It
	// fails with CodeNotFound when no open connection has that id, and with
	// CodeNotSupported when no listener is open.
	CloseClient(ctx context.Context, id, reason string) error
}

// ClientCloserOf returns the ClientCloser of c: c itself, or the first
// client down the chain of wrapped clients (Unwrapper) that implements it,
// so that a wrapper which decides (the read-only one refuses, the SSH
// session audits) is the one called. ok is true only when a client that is
// not a wrapper implements it.
func ClientCloserOf(c Client) (cc ClientCloser, ok bool) {
	return lookThrough[ClientCloser](c, true)
}
