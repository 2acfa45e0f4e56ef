package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/peeklock/peeklock/broker/emulatorconfig"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/engine/store"
	"github.com/peeklock/peeklock/broker/metrics"
)

// brokerFlags are the flags of the embedded broker.
type brokerFlags struct {
	data     string
	config   string
	amqp     string
	admin    string
	listener listenerFlags
	front    frontFlags
	history  bool
}

func (b *brokerFlags) register(fs *pflag.FlagSet, amqpDefault, adminDefault string) {
	fs.StringVar(&b.data, "data", "", "keep messages durably in this directory (default: in memory)")
	fs.StringVar(&b.config, "config", "", "entities from a Service Bus emulator Config.json file")
	fs.StringVar(&b.amqp, "amqp", amqpDefault, "listen for AMQP 1.0 clients on this address")
	fs.StringVar(&b.admin, "admin", adminDefault, "serve /health and the admin API on this address")
	fs.BoolVar(&b.history, "history", true, "keep each message's history (peeklock history, the detail view); --history=false saves its writes")
	b.listener.register(fs)
	b.front.register(fs)
}

// check validates the flags and reads the Config.json file, if any, without
// writing anything.
func (b *brokerFlags) check() (*emulatorconfig.Config, error) {
	if err := b.listener.check(); err != nil {
		return nil, err
	}
	for _, a := range []struct{ flag, addr string }{{"amqp", b.amqp}, {"admin", b.admin}, {"tls-addr", b.front.tlsAddr}} {
		if err := checkAddr(a.flag, a.addr); err != nil {
			return nil, err
		}
	}
	if err := b.front.check(); err != nil {
		return nil, err
	}
	if b.config == "" {
		return nil, nil
	}
	return loadEmulatorConfig(b.config)
}

// listens reports whether the flags open the listener (an address given).
func (b *brokerFlags) listens() bool {
	return b.amqp != "" || b.admin != "" || b.front.tlsAddr != ""
}

// checkAddr refuses a listen address that is not HOST:PORT.
func checkAddr(flag, addr string) error {
	if addr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--%s %q: want HOST:PORT (e.g. 127.0.0.1:5672 or :5672)", flag, addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		if _, err := net.LookupPort("tcp", port); err != nil {
			return usagef("--%s %q: %q is not a port", flag, addr, port)
		}
	}
	return nil
}

// loadEmulatorConfig reads a Service Bus emulator Config.json. What is
// wrong in it is the user's to fix: exit status 2, with the JSON path or
// the line and column, and no tracking id (it is a local file).
func loadEmulatorConfig(path string) (*emulatorconfig.Config, error) {
	cfg, err := emulatorconfig.LoadFile(path)
	if err != nil {
		msg := localMessage(err)
		if errors.Is(err, fs.ErrNotExist) {
			msg = "config " + path + ": no such file"
		}
		return nil, usageError{msg}
	}
	// The definitions themselves too, before anything is opened.
	if err := engine.CheckEntities(cfg.Entities); err != nil {
		return nil, usageError{path + ": " + localMessage(err)}
	}
	return cfg, nil
}

// openEngine starts the embedded broker on a memory or Pebble store (a
// directory that does not exist yet is created) and applies cfg when given.
// A Pebble store reports its batches and syncs to obs (metrics) when obs is
// not nil. history false turns the message histories off.
func openEngine(ctx context.Context, data string, cfg *emulatorconfig.Config, obs *metrics.StoreMetrics, history bool) (*engine.Engine, error) {
	var st store.Store
	if data != "" {
		opts := store.PebbleOptions{}
		if obs != nil {
			opts.Observer = obs
		}
		p, err := store.OpenPebble(data, opts)
		if err != nil {
			return nil, fmt.Errorf("open data directory %s: %w", data, err)
		}
		st = p
	}
	eng, err := engine.New(engine.Options{Store: st, NoHistory: !history})
	if err != nil {
		if st != nil {
			st.Close()
		}
		return nil, err
	}
	if cfg != nil {
		if err := eng.ApplyConfig(ctx, cfg.Entities); err != nil {
			eng.Close()
			return nil, fmt.Errorf("config: %w", err)
		}
	}
	return eng, nil
}

// dataDirCreated reports whether the data directory does not exist yet, so
// that a command that refuses to start after opening it can remove it
// again (removeDataDir): a refusal leaves nothing on disk.
func dataDirCreated(dir string) bool {
	if dir == "" {
		return false
	}
	_, err := os.Stat(dir)
	return errors.Is(err, fs.ErrNotExist)
}

// listeners are the AMQP listener and the admin API, bound but not yet
// serving.
type listeners struct {
	amqp, admin, tls net.Listener
}

// bind opens the sockets of the addresses given (an empty address opens
// nothing); on error it closes what it opened.
func (b *brokerFlags) bind() (*listeners, error) {
	var ls listeners
	for _, a := range []struct {
		what, addr string
		l          *net.Listener
	}{{"amqp", b.amqp, &ls.amqp}, {"admin", b.admin, &ls.admin}, {"tls", b.front.tlsAddr, &ls.tls}} {
		if a.addr == "" {
			continue
		}
		l, err := net.Listen("tcp", a.addr)
		if err != nil {
			ls.close()
			return nil, fmt.Errorf("%s listener: %w", a.what, err)
		}
		*a.l = l
	}
	return &ls, nil
}

// addrs returns the addresses of the bound sockets.
func (ls *listeners) addrs() []net.Addr {
	var out []net.Addr
	for _, l := range []net.Listener{ls.amqp, ls.admin, ls.tls} {
		if l != nil {
			out = append(out, l.Addr())
		}
	}
	return out
}

func (ls *listeners) close() {
	for _, l := range []net.Listener{ls.amqp, ls.admin, ls.tls} {
		if l != nil {
			l.Close()
		}
	}
}
