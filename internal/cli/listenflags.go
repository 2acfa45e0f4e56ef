package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/peeklock/peeklock/broker/amqpserver"
	"github.com/peeklock/peeklock/broker/sas"
)

// listenerFlags are the AMQP listener's limits and keys, for serve and for
// the dashboard when it opens the listener too (--amqp).
type listenerFlags struct {
	keys           sasKeys
	maxConnections int
	maxSessions    int
	maxLinks       int
	maxUnsettled   int
	maxFrameSize   uint
	idleTimeout    time.Duration
	authTimeout    time.Duration
	maxUnauth      int
}

func (l *listenerFlags) register(fs *pflag.FlagSet) {
	fs.Var(&l.keys, "key", "a shared access key NAME=KEY[:RIGHTS] for the listener and the admin API, RIGHTS a list of Manage,Send,Listen "+
		"(default all); repeat for more (default "+amqpserver.DefaultKeyName+"="+amqpserver.DefaultKey+", as the emulator has)")
	markSecret(fs, "key")
	fs.IntVar(&l.maxConnections, "max-connections", amqpserver.DefaultMaxConnections, "most AMQP connections open at once")
	fs.IntVar(&l.maxSessions, "max-sessions", amqpserver.DefaultMaxSessionsPerConnection, "most AMQP sessions per connection")
	fs.IntVar(&l.maxLinks, "max-links", amqpserver.DefaultMaxLinksPerSession, "most links per AMQP session")
	fs.IntVar(&l.maxUnsettled, "max-unsettled", amqpserver.DefaultMaxUnsettledPerLink, "most unsettled deliveries per link: a peek-lock receiver gets its credit up to this; a sender at most "+fmt.Sprint(amqpserver.MaxSenderCredit))
	fs.UintVar(&l.maxFrameSize, "max-frame-size", amqpserver.DefaultMaxFrameSize, "largest AMQP frame accepted, in bytes")
	fs.DurationVar(&l.idleTimeout, "idle-timeout", amqpserver.DefaultIdleTimeout, "close an AMQP connection silent this long (0: never)")
	fs.DurationVar(&l.authTimeout, "auth-timeout", amqpserver.DefaultAuthTimeout, "close an AMQP connection that has not authenticated (SASL PLAIN with a key, or a token on $cbs) this long after it connected (0: never)")
	fs.IntVar(&l.maxUnauth, "max-unauthenticated", amqpserver.DefaultMaxUnauthenticated, "most AMQP connections not yet authenticated; a new one beyond closes the oldest")
}

// check refuses limits that make no sense, naming the flag.
func (l *listenerFlags) check() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"max-connections", l.maxConnections}, {"max-sessions", l.maxSessions}, {"max-links", l.maxLinks}, {"max-unsettled", l.maxUnsettled}, {"max-unauthenticated", l.maxUnauth}} {
		if f.v < 1 {
			return usageError{fmt.Sprintf("--%s %d: at least 1", f.name, f.v)}
		}
	}
	if l.maxFrameSize < amqpserver.MinMaxFrameSize || l.maxFrameSize > 1<<32-1 {
		return usageError{fmt.Sprintf("--max-frame-size %d: between %d and %d bytes", l.maxFrameSize, amqpserver.MinMaxFrameSize, uint64(1<<32-1))}
	}
	if l.maxSessions > 65536 {
		return usageError{fmt.Sprintf("--max-sessions %d: at most 65536", l.maxSessions)}
	}
	if l.idleTimeout < 0 {
		return usageError{fmt.Sprintf("--idle-timeout %v: 0 (never) or more", l.idleTimeout)}
	}
	if l.idleTimeout > 0 && l.idleTimeout < time.Millisecond {
		return usageError{fmt.Sprintf("--idle-timeout %v: 0 (never) or at least 1ms", l.idleTimeout)}
	}
	if l.authTimeout < 0 {
		return usageError{fmt.Sprintf("--auth-timeout %v: 0 (never) or more", l.authTimeout)}
	}
	return nil
}

// options returns the listener options the flags set.
func (l *listenerFlags) options() amqpserver.Options {
	o := amqpserver.Options{
		Keys:                     l.keys.m,
		KeyRights:                l.keys.rights,
		MaxConnections:           l.maxConnections,
		MaxSessionsPerConnection: l.maxSessions,
		MaxLinksPerSession:       l.maxLinks,
		MaxUnsettledPerLink:      l.maxUnsettled,
		MaxFrameSize:             uint32(l.maxFrameSize),
		IdleTimeout:              l.idleTimeout,
		AuthTimeout:              l.authTimeout,
		MaxUnauthenticated:       l.maxUnauth,
	}
	if l.idleTimeout == 0 {
		o.IdleTimeout = -1 // the flag's 0 is "never"; the option's 0 is the default
	}
	if l.authTimeout == 0 {
		o.AuthTimeout = -1
	}
	return o
}

// firstKey returns the key named first on the command line, or the default
// key: the one the printed connection string uses.
func (l *listenerFlags) firstKey() (name, key string) {
	if len(l.keys.order) == 0 {
		return amqpserver.DefaultKeyName, amqpserver.DefaultKey
	}
	name = l.keys.order[0]
	return name, l.keys.m[name]
}

// sasKeys is a repeatable NAME=KEY[:RIGHTS] flag.
type sasKeys struct {
	m      map[string]string
	rights map[string]sas.Rights // the keys given a rights list
	order  []string
}

func (k *sasKeys) String() string { return strings.Join(k.order, ",") } // names only: keys are secret

// Type names the flag's value in help.
func (k *sasKeys) Type() string { return "NAME=KEY[:RIGHTS]" }

func (k *sasKeys) Set(v string) error {
	name, key, ok := strings.Cut(v, "=")
	if !ok || name == "" || key == "" {
		return fmt.Errorf("want NAME=KEY[:RIGHTS], got %q", redactKey(v))
	}
	if k.m == nil {
		k.m = make(map[string]string)
		k.rights = make(map[string]sas.Rights)
	}
	if _, dup := k.m[name]; dup {
		return fmt.Errorf("key name %q given twice", name)
	}
	// A rights list follows the last colon; a key is base64 and has none.
	if i := strings.LastIndexByte(key, ':'); i >= 0 {
		r, err := sas.ParseRights(key[i+1:])
		if err != nil {
			return fmt.Errorf("key %q: %w", name, err)
		}
		if key = key[:i]; key == "" {
			return fmt.Errorf("want NAME=KEY[:RIGHTS], got %q", redactKey(v))
		}
		k.rights[name] = r
	}
	k.m[name] = key
	k.order = append(k.order, name)
	return nil
}

// redactKey hides what follows "=" in a malformed --key value.
func redactKey(v string) string {
	if name, _, ok := strings.Cut(v, "="); ok {
		return name + "=…"
	}
	return v
}
