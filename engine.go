package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/peeklock/peeklock/broker/amqpserver"
	"github.com/peeklock/peeklock/broker/amqpserver/admin"
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
}

func (b *brokerFlags) register(fs *pflag.FlagSet, amqpDefault, adminDefault string) {
	fs.StringVar(&b.data, "data", "", "keep messages durably in this directory (default: in memory)")
	fs.StringVar(&b.config, "config", "", "entities from a Service Bus emulator Config.json file")
	fs.StringVar(&b.amqp, "amqp", amqpDefault, "listen for AMQP 1.0 clients on this address")
	fs.StringVar(&b.admin, "admin", adminDefault, "serve /health and the admin API on this address")
	b.listener.register(fs)
}

// check validates the flags and reads the Config.json file, if any, without
// writing anything.
func (b *brokerFlags) check() (*engine.Config, error) {
	if err := b.listener.check(); err != nil {
		return nil, err
	}
	for _, a := range []struct{ flag, addr string }{{"amqp", b.amqp}, {"admin", b.admin}} {
		if err := checkAddr(a.flag, a.addr); err != nil {
			return nil, err
		}
	}
	if b.config == "" {
		return nil, nil
	}
	return loadEmulatorConfig(b.config)
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
func loadEmulatorConfig(path string) (*engine.Config, error) {
	cfg, err := engine.LoadConfigFile(path)
	if err != nil {
		msg := localMessage(err)
		if errors.Is(err, fs.ErrNotExist) {
			msg = "config " + path + ": no such file"
		}
		return nil, usageError{msg}
	}
	return cfg, nil
}

// openEngine starts the embedded broker on a memory or Pebble store (a
// directory that does not exist yet is created) and applies cfg when given.
func openEngine(ctx context.Context, data string, cfg *engine.Config) (*engine.Engine, error) {
	var st store.Store
	if data != "" {
		p, err := store.OpenPebble(data, store.PebbleOptions{})
		if err != nil {
			return nil, fmt.Errorf("open data directory %s: %w", data, err)
		}
		st = p
	}
	eng, err := engine.New(engine.Options{Store: st})
	if err != nil {
		if st != nil {
			st.Close()
		}
		return nil, err
	}
	if cfg != nil {
		if err := eng.ApplyConfig(ctx, cfg); err != nil {
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
	amqp, admin net.Listener
}

// bind opens the sockets of the addresses given (an empty address opens
// nothing); on error it closes what it opened.
func (b *brokerFlags) bind() (*listeners, error) {
	var ls listeners
	if b.amqp != "" {
		l, err := net.Listen("tcp", b.amqp)
		if err != nil {
			return nil, fmt.Errorf("amqp listener: %w", err)
		}
		ls.amqp = l
	}
	if b.admin != "" {
		l, err := net.Listen("tcp", b.admin)
		if err != nil {
			ls.close()
			return nil, fmt.Errorf("admin listener: %w", err)
		}
		ls.admin = l
	}
	return &ls, nil
}

func (ls *listeners) close() {
	for _, l := range []net.Listener{ls.amqp, ls.admin} {
		if l != nil {
			l.Close()
		}
	}
}

// startListeners serves the AMQP listener and the admin HTTP API on the
// bound sockets and returns a function that closes them. srv is the AMQP
// server (made beforehand by newAMQPServer, so that its options are checked
// before any socket opens).
func startListeners(eng *engine.Engine, b brokerFlags, ls *listeners, srv *amqpserver.Server, log *slog.Logger) func() {
	var closers []func()
	if ls.amqp != nil {
		go srv.Serve(ls.amqp)
		closers = append(closers, func() { srv.Close() })
		keyName, key := b.listener.firstKey()
		addr := ls.amqp.Addr().String()
		log.Info("AMQP 1.0 listener ready", "addr", addr,
			"connection_string", fmt.Sprintf("Endpoint=sb://%s;SharedAccessKeyName=%s;SharedAccessKey=%s;UseDevelopmentEmulator=true;",
				addr, keyName, key))
	}
	if ls.admin != nil {
		var lis metrics.Listener
		if srv != nil {
			lis = srv
		}
		hs := &http.Server{Handler: admin.NewHandler(eng, admin.Options{Keys: b.listener.keys.m, KeyRights: b.listener.keys.rights, Logger: log,
			Metrics: metrics.Handler(eng, lis)}), ReadHeaderTimeout: 10 * time.Second}
		go hs.Serve(ls.admin)
		closers = append(closers, func() { hs.Close() })
		addr := ls.admin.Addr().String()
		log.Info("admin API ready", "addr", addr, "health", "http://"+addr+"/health", "metrics", "http://"+addr+"/metrics")
	}
	return func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
}

// newAMQPServer makes the AMQP server of the flags (nil when --amqp is
// empty).
func newAMQPServer(eng *engine.Engine, b brokerFlags, log *slog.Logger) (*amqpserver.Server, error) {
	if b.amqp == "" {
		return nil, nil
	}
	o := b.listener.options()
	o.Logger = log
	return amqpserver.New(eng, o)
}
