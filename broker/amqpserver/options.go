package amqpserver

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker/amqpserver/entra"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
	"github.com/peeklock/peeklock/broker/sas"
)

// Defaults of Options, like the Service Bus emulator's where it has one.
const (
	DefaultKeyName                  = "RootManageSharedAccessKey"
	DefaultKey                      = "SAS_KEY_VALUE"
	DefaultIdleTimeout              = 60 * time.Second
	DefaultMaxFrameSize             = 64 << 10
	DefaultMaxConnections           = 1024
	DefaultMaxSessionsPerConnection = 256
	DefaultMaxLinksPerSession       = 256
	DefaultMaxUnsettledPerLink      = 5000
	DefaultContainerID              = "peeklock"
	DefaultAuthTimeout              = 30 * time.Second
	DefaultMaxUnauthenticated       = 64

	// MinMaxFrameSize is the smallest MaxFrameSize AMQP 1.0 allows.
	MinMaxFrameSize = wire.MinMaxFrameSize

	// MaxSenderCredit bounds the credit a client's sender gets, whatever
	// MaxUnsettledPerLink says.
	MaxSenderCredit = 256
)

// Options configure a Server. The zero value is usable: the default key,
// tokens required, the limits below, the real clock, no log.
type Options struct {
	// Keys maps SAS key names to keys. Nil means one key,
	// DefaultKeyName = DefaultKey, as the Service Bus emulator has.
	Keys map[string]string
	// KeyRights limits keys to rights, by key name; a key not named has
	// every right (sas.AllRights).
	KeyRights map[string]sas.Rights
	// AllowAnonymous lets links attach without a CBS token that covers
	// them (the brief's RequireAuth = false). Tokens that clients put are
	// still validated. The zero value requires tokens.
	AllowAnonymous bool
	// Authorizer validates CBS tokens; nil means SAS validation against
	// Keys on the Clock.
	Authorizer Authorizer
	// EntraID, when set, accepts Microsoft Entra ID tokens (put-token type
	// jwt) without checking their signature, for local development (see
	// package entra); nil refuses them.
	EntraID *entra.Validator
	// MaxFrameSize is the largest frame the listener accepts (announced in
	// its open); 0 means DefaultMaxFrameSize, and at least
	// wire.MinMaxFrameSize.
	MaxFrameSize uint32
	// MaxConnections caps open connections; more are closed on accept.
	// 0 means DefaultMaxConnections.
	MaxConnections int
	// MaxUnauthenticated caps the connections that have not authenticated
	// yet (see AuthTimeout); they count towards MaxConnections too. A new
	// connection beyond it closes the oldest unauthenticated one, so that
	// peers which never authenticate cannot keep real clients out: they
	// would have to open connections faster than a client authenticates.
	// 0 means DefaultMaxUnauthenticated; it is at most MaxConnections.
	MaxUnauthenticated int
	// AuthTimeout is how long a connection may stay unauthenticated: it
	// authenticates with SASL PLAIN and a configured key, or with a valid
	// token put on $cbs, or it is closed with amqp:unauthorized-access.
	// Until then it may attach only the $cbs link pair. 0 means
	// DefaultAuthTimeout; negative disables the deadline (not the cap).
	// With AllowAnonymous every connection is authenticated from the start.
	AuthTimeout time.Duration
	// MaxSessionsPerConnection caps the sessions of a connection (the
	// announced channel-max is one less). 0 means the default.
	MaxSessionsPerConnection int
	// MaxLinksPerSession caps the links of a session (the announced
	// handle-max is one less). 0 means the default.
	MaxLinksPerSession int
	// MaxUnsettledPerLink bounds the unsettled deliveries of a link: a
	// client's peek-lock receiver gets as many as its credit asks for, up
	// to this many unsettled at once; a client's sender gets at most this
	// much credit, and never more than MaxSenderCredit (its messages are
	// held in memory until they are stored). 0 means the default.
	MaxUnsettledPerLink int
	// IdleTimeout is how long a peer may stay silent before the listener
	// closes its connection; it is announced in the open so that clients
	// send heartbeats. 0 means DefaultIdleTimeout; negative disables it.
	IdleTimeout time.Duration
	// Clock is the source of time for token expiry, heartbeats and the idle
	// timeout; nil means the engine's clock.
	Clock clockwork.Clock
	// Logger receives the listener's log; nil discards it.
	Logger *slog.Logger
	// ContainerID is announced in the open; "" means DefaultContainerID.
	ContainerID string
}

// normalize returns o with defaults filled in, or an error for values that
// cannot work.
func (o Options) normalize(engineClock clockwork.Clock) (Options, error) {
	if o.Keys == nil {
		o.Keys = map[string]string{DefaultKeyName: DefaultKey}
	}
	for name, key := range o.Keys {
		if name == "" || key == "" {
			return o, fmt.Errorf("amqpserver: a SAS key name and its key must not be empty (key name %q)", name)
		}
	}
	if o.MaxFrameSize == 0 {
		o.MaxFrameSize = DefaultMaxFrameSize
	}
	if o.MaxFrameSize < wire.MinMaxFrameSize {
		return o, fmt.Errorf("amqpserver: MaxFrameSize %d is below the AMQP minimum %d", o.MaxFrameSize, wire.MinMaxFrameSize)
	}
	if o.MaxConnections == 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	if o.MaxUnauthenticated == 0 {
		o.MaxUnauthenticated = DefaultMaxUnauthenticated
	}
	if o.AuthTimeout == 0 {
		o.AuthTimeout = DefaultAuthTimeout
	}
	if o.MaxSessionsPerConnection == 0 {
		o.MaxSessionsPerConnection = DefaultMaxSessionsPerConnection
	}
	if o.MaxLinksPerSession == 0 {
		o.MaxLinksPerSession = DefaultMaxLinksPerSession
	}
	if o.MaxUnsettledPerLink == 0 {
		o.MaxUnsettledPerLink = DefaultMaxUnsettledPerLink
	}
	switch {
	case o.MaxConnections < 0:
		return o, fmt.Errorf("amqpserver: MaxConnections %d is negative", o.MaxConnections)
	case o.MaxUnauthenticated < 0:
		return o, fmt.Errorf("amqpserver: MaxUnauthenticated %d is negative", o.MaxUnauthenticated)
	case o.MaxSessionsPerConnection < 0 || o.MaxSessionsPerConnection > 1<<16:
		return o, fmt.Errorf("amqpserver: MaxSessionsPerConnection %d is outside 1..65536", o.MaxSessionsPerConnection)
	case o.MaxLinksPerSession < 0:
		return o, fmt.Errorf("amqpserver: MaxLinksPerSession %d is negative", o.MaxLinksPerSession)
	case o.MaxUnsettledPerLink < 0:
		return o, fmt.Errorf("amqpserver: MaxUnsettledPerLink %d is negative", o.MaxUnsettledPerLink)
	}
	o.MaxUnauthenticated = min(o.MaxUnauthenticated, o.MaxConnections)
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.IdleTimeout > 0 && o.IdleTimeout < time.Millisecond {
		return o, fmt.Errorf("amqpserver: IdleTimeout %v is below a millisecond", o.IdleTimeout)
	}
	if o.Clock == nil {
		o.Clock = engineClock
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.ContainerID == "" {
		o.ContainerID = DefaultContainerID
	}
	if o.Authorizer == nil {
		o.Authorizer = newSASAuthorizer(o.Keys, o.KeyRights, o.Clock)
	}
	return o, nil
}
