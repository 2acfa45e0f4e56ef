package remote

import (
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/jonboulle/clockwork"
)

// Defaults of Config.
const (
	DefaultTimeout       = 30 * time.Second
	DefaultTokenLifetime = time.Hour
	DefaultMinBackoff    = 250 * time.Millisecond
	DefaultMaxBackoff    = 30 * time.Second
	DefaultDrainTimeout  = 2 * time.Second
	DefaultPurgeLimit    = 1_000_000
	// DefaultCountsFreshness is how long the counts of the last entity list
	// may be used to skip peeking for a category that is empty.
	DefaultCountsFreshness = 5 * time.Second
)

// closeTimeout bounds closing a link, session or connection.
const closeTimeout = 5 * time.Second

// closeGiveBackTimeout bounds how long Close spends giving back the message
// locks the client still holds.
const closeGiveBackTimeout = 3 * time.Second

// Config configures a Client.
type Config struct {
	// Conn is where to connect (ParseConnectionString, FromNamespace).
	Conn ConnectionString
	// Entities are entity paths to show when the endpoint cannot list
	// entities (generic AMQP brokers; a credential without Manage rights),
	// besides Conn.EntityPath.
	Entities []string
	// Timeout bounds every operation (on top of its context); 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// TokenLifetime is the lifetime of the SAS tokens signed from a key;
	// they are renewed at four fifths of it (at most five minutes before
	// expiry). 0 means DefaultTokenLifetime.
	TokenLifetime time.Duration
	// Clock drives token renewal, reconnection backoff and lock expiry; nil
	// means the real clock.
	Clock clockwork.Clock
	// TLSConfig is used for TLS connections (Azure, amqps://); nil means
	// the system defaults with the endpoint's host name.
	TLSConfig *tls.Config
	// AdminURL overrides the base URL of the admin (ATOM) API, e.g.
	// "http://127.0.0.1:5300"; "" means https://HOST for Azure and
	// http://HOST:5300 for the emulator.
	AdminURL string
	// HTTPClient makes the admin API requests; nil means a client with
	// Timeout.
	HTTPClient *http.Client
	// ContainerID names the client's AMQP connections (the open frame's
	// container-id), e.g. "peeklock cli alice", so that the broker's logs
	// and peeklock serve's message histories say who acted; "" means a
	// random one.
	ContainerID string
	// Credential gets Microsoft Entra ID tokens when Conn.Entra is set; nil
	// means azidentity's DefaultAzureCredential.
	Credential azcore.TokenCredential
	// MinBackoff and MaxBackoff bound the wait between reconnection
	// attempts, which doubles from MinBackoff up to MaxBackoff; 0 means the
	// defaults.
	MinBackoff, MaxBackoff time.Duration
	// DrainTimeout bounds the credit drain that ends each peek-lock receive;
	// 0 means DefaultDrainTimeout.
	DrainTimeout time.Duration
	// PurgeLimit bounds the messages one Purge removes; 0 means
	// DefaultPurgeLimit.
	PurgeLimit int64
	// Logger receives the client's log; nil discards it.
	Logger *slog.Logger
}

// normalize fills in defaults.
func (c Config) normalize() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.TokenLifetime <= 0 {
		c.TokenLifetime = DefaultTokenLifetime
	}
	if c.Clock == nil {
		c.Clock = clockwork.NewRealClock()
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = DefaultMinBackoff
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.MaxBackoff < c.MinBackoff {
		c.MaxBackoff = c.MinBackoff
	}
	if c.DrainTimeout <= 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.PurgeLimit <= 0 {
		c.PurgeLimit = DefaultPurgeLimit
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: c.Timeout}
	}
	return c
}

// serviceBus reports whether the endpoint speaks the Service Bus dialect.
func (c Config) serviceBus() bool { return c.Conn.Kind != KindGeneric }
