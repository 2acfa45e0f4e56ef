// Command peeklock is a terminal dashboard for live Azure Service Bus-style
// queue management, and a Service Bus-compatible broker it runs embedded.
//
// This file holds flags and wiring only (DESIGN.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver"
	"github.com/peeklock/peeklock/broker/amqpserver/admin"
	"github.com/peeklock/peeklock/broker/demo"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/engine/store"
	"github.com/peeklock/peeklock/broker/remote"
	"github.com/peeklock/peeklock/model"
	"github.com/peeklock/peeklock/sshserver"
)

// usageError is a bad command line: one line on stderr and exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func main() {
	err := run(os.Args[1:], os.Stdout)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.As(err, new(usageError)):
		fmt.Fprintf(os.Stderr, "peeklock: %v (see peeklock --help)\n", err)
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "peeklock: %v\n", err)
		os.Exit(1)
	}
}

const rootUsage = `peeklock — a terminal dashboard for Service Bus queues, with an embedded broker.

Usage:
  peeklock [flags]                       dashboard on the embedded broker (demo traffic unless --no-demo or --config)
  peeklock serve [flags]                 the broker without a screen (AMQP listener and admin API)
  peeklock connect [CONNECTION-STRING]   dashboard on a remote endpoint

Flags of peeklock:
`

// dashboardFlags are the flags every dashboard command shares.
type dashboardFlags struct {
	entity   string
	readOnly bool
	theme    string
	refresh  time.Duration
	uiConfig string
}

// options builds the dashboard's options: the config file first, then the
// command line over it.
func (d *dashboardFlags) options() (model.Options, error) {
	var opts model.Options
	path := d.uiConfig
	if path == "" {
		path = model.DefaultConfigPath()
	}
	cfg, err := model.LoadConfig(path)
	switch {
	case err == nil:
		if err := cfg.Apply(&opts); err != nil {
			return opts, err
		}
	case d.uiConfig == "" && errors.Is(err, fs.ErrNotExist):
		// No config file at the default path: defaults.
	default:
		return opts, err
	}
	opts.Entity = d.entity
	opts.ReadOnly = d.readOnly
	if d.theme != "" {
		opts.Theme = d.theme
	}
	if d.refresh > 0 {
		opts.Refresh = d.refresh
	}
	return opts, nil
}

func (d *dashboardFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.entity, "entity", "", "select this entity at start")
	fs.BoolVar(&d.readOnly, "read-only", false, "disable every key that changes anything")
	fs.StringVar(&d.theme, "theme", "", "colour theme: dark, light, high-contrast (default: from the terminal background)")
	fs.DurationVar(&d.refresh, "refresh", 0, "refresh interval (default 1s, or the config file's)")
	fs.StringVar(&d.uiConfig, "ui-config", "", "dashboard config file (default $XDG_CONFIG_HOME/peeklock/config.toml)")
}

// brokerFlags are the flags of the embedded broker.
type brokerFlags struct {
	data     string
	config   string
	amqp     string
	admin    string
	listener listenerFlags
}

func (b *brokerFlags) register(fs *flag.FlagSet, amqpDefault, adminDefault string) {
	fs.StringVar(&b.data, "data", "", "keep messages durably in this directory (default: in memory)")
	fs.StringVar(&b.config, "config", "", "entities from a Service Bus emulator Config.json file")
	fs.StringVar(&b.amqp, "amqp", amqpDefault, "listen for AMQP 1.0 clients on this address")
	fs.StringVar(&b.admin, "admin", adminDefault, "serve /health and the admin API on this address")
	b.listener.register(fs)
}

// command is a flag set with its usage text. It prints nothing by itself:
// parse prints the usage for --help, and a bad flag becomes one line from
// main.
type command struct {
	*flag.FlagSet
	usage string
	out   io.Writer
}

func newCommand(name, usage string, out io.Writer) *command {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &command{FlagSet: fs, usage: usage, out: out}
}

// parse parses args; --help prints the usage and returns flag.ErrHelp.
func (c *command) parse(args []string) error {
	err := c.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(c.out, c.usage)
		c.SetOutput(c.out)
		c.PrintDefaults()
		return err
	}
	if err != nil {
		return usageError{err.Error()}
	}
	return nil
}

func run(args []string, out io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "serve":
			return runServe(args[1:], out)
		case "connect":
			return runConnect(args[1:], out)
		}
	}
	fs := newCommand("peeklock", rootUsage, out)
	var d dashboardFlags
	var b brokerFlags
	var noDemo bool
	d.register(fs.FlagSet)
	b.register(fs.FlagSet, "", "")
	fs.BoolVar(&noDemo, "no-demo", false, "do not create demo entities or run demo traffic")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := b.listener.check(); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unknown command %q", fs.Arg(0))}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	eng, err := openEngine(ctx, b)
	if err != nil {
		return err
	}
	defer eng.Close()
	// The screen belongs to the dashboard: the listeners log nothing.
	closeListeners, err := startListeners(eng, b, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer closeListeners()
	if b.config == "" && !noDemo {
		cfg := demo.DefaultConfig()
		if err := demo.Setup(ctx, eng, cfg); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		demoCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		go demo.Run(demoCtx, eng, cfg, demo.Options{})
		if d.entity == "" {
			d.entity = cfg.Workloads[0].Entity // the busiest queue, not the first by name
		}
	}
	return runDashboard(ctx, eng, d)
}

// openEngine starts the embedded broker on a memory or Pebble store and
// applies a Config.json when one is given.
func openEngine(ctx context.Context, b brokerFlags) (*engine.Engine, error) {
	var st store.Store
	if b.data != "" {
		p, err := store.OpenPebble(b.data, store.PebbleOptions{})
		if err != nil {
			return nil, fmt.Errorf("open data directory %s: %w", b.data, err)
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
	if b.config != "" {
		cfg, err := engine.LoadConfigFile(b.config)
		if err == nil {
			err = eng.ApplyConfig(ctx, cfg)
		}
		if err != nil {
			eng.Close()
			return nil, fmt.Errorf("config %s: %w", b.config, err)
		}
	}
	return eng, nil
}

func runDashboard(ctx context.Context, c broker.Client, d dashboardFlags) error {
	if d.readOnly {
		c = broker.ReadOnly(c)
	}
	opts, err := d.options()
	if err != nil {
		return err
	}
	m := model.New(c, opts)
	defer m.Close()
	_, err = tea.NewProgram(m, tea.WithContext(ctx)).Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}

const serveUsage = `peeklock serve — the broker without a screen.

Usage:
  peeklock serve [flags]

Flags:
`

func runServe(args []string, out io.Writer) error {
	fs := newCommand("serve", serveUsage, out)
	var b brokerFlags
	var sf sshFlags
	var d dashboardFlags
	b.register(fs.FlagSet, "127.0.0.1:5672", "127.0.0.1:5300")
	sf.register(fs.FlagSet)
	fs.StringVar(&d.uiConfig, "ui-config", "", "dashboard config file for SSH sessions and [ssh] roles (default $XDG_CONFIG_HOME/peeklock/config.toml)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := b.listener.check(); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if b.amqp == "" && b.admin == "" && sf.addr == "" {
		return usageError{"serve: nothing to serve (--amqp, --admin and --ssh are all empty)"}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	amqpserver.TuneGC(ctx)
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	eng, err := openEngine(ctx, b)
	if err != nil {
		return err
	}
	defer eng.Close()
	closeListeners, err := startListeners(eng, b, log)
	if err != nil {
		return err
	}
	defer closeListeners()
	if sf.addr != "" {
		return serveSSH(ctx, eng, sf, d, b.data, log)
	}
	<-ctx.Done()
	log.Info("shutting down")
	return nil
}

// startListeners opens the AMQP listener and the admin HTTP API on the
// addresses given (an empty address opens nothing) and returns a function
// that closes them.
func startListeners(eng *engine.Engine, b brokerFlags, log *slog.Logger) (func(), error) {
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	if b.amqp != "" {
		o := b.listener.options()
		o.Logger = log
		srv, err := amqpserver.New(eng, o)
		if err != nil {
			return nil, err
		}
		l, err := net.Listen("tcp", b.amqp)
		if err != nil {
			return nil, fmt.Errorf("amqp listener: %w", err)
		}
		go srv.Serve(l)
		closers = append(closers, func() { srv.Close() })
		keyName, key := b.listener.firstKey()
		log.Info("AMQP 1.0 listener ready", "addr", l.Addr().String(),
			"connection_string", fmt.Sprintf("Endpoint=sb://%s;SharedAccessKeyName=%s;SharedAccessKey=%s;UseDevelopmentEmulator=true;",
				l.Addr().String(), keyName, key))
	}
	if b.admin != "" {
		l, err := net.Listen("tcp", b.admin)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("admin listener: %w", err)
		}
		hs := admin.NewServer(admin.NewHandler(eng, admin.Options{Keys: b.listener.keys.m, KeyRights: b.listener.keys.rights, Logger: log}), admin.ServerOptions{})
		go hs.Serve(l)
		closers = append(closers, func() { hs.Close() })
		log.Info("admin API ready", "addr", l.Addr().String(), "health", "http://"+l.Addr().String()+"/health")
	}
	return closeAll, nil
}

// sshFlags are the flags of the SSH server.
type sshFlags struct {
	addr           string
	authorizedKeys string
}

func (s *sshFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.addr, "ssh", "", "serve the dashboard over SSH on this address (e.g. :2222)")
	fs.StringVar(&s.authorizedKeys, "authorized-keys", "", "OpenSSH authorized_keys file of the keys that may connect (roles come from the [ssh] section of the config file)")
}

// serveSSH serves the dashboard on c over SSH until ctx ends. The host key
// lives in the data directory, or beside the config file without one.
func serveSSH(ctx context.Context, c broker.Client, sf sshFlags, d dashboardFlags, dataDir string, log *slog.Logger) error {
	configPath := d.uiConfig
	if configPath == "" {
		configPath = model.DefaultConfigPath()
	}
	cfg, err := sshserver.LoadConfig(configPath)
	if err != nil {
		if d.uiConfig != "" {
			return err
		}
		if _, statErr := os.Stat(configPath); statErr == nil {
			return err
		}
		cfg = sshserver.Config{}
	}
	cfg.Addr = sf.addr
	if sf.authorizedKeys != "" {
		cfg.AuthorizedKeysPath = sf.authorizedKeys
	}
	if cfg.AuthorizedKeysPath == "" {
		return usageError{"--ssh needs --authorized-keys FILE (or authorized_keys in the [ssh] section of the config file)"}
	}
	if cfg.HostKeyPath == "" {
		dir := dataDir
		if dir == "" {
			dir = filepath.Dir(model.DefaultConfigPath())
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		cfg.HostKeyPath = sshserver.HostKeyPathIn(dir)
	}
	cfg.Logger = log
	base, err := d.options()
	if err != nil {
		return err
	}
	srv, err := sshserver.New(cfg, c, func(role sshserver.Role) model.Options {
		opts := base
		opts.ReadOnly = opts.ReadOnly || role != sshserver.RoleOperator
		return opts
	})
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", sf.addr)
	if err != nil {
		return err
	}
	log.Info("serving the dashboard over SSH", "addr", l.Addr().String(), "host_key", srv.HostKeyFingerprint())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case <-ctx.Done():
		return srv.Close()
	case err := <-errc:
		return err
	}
}

const connectUsage = `peeklock connect — the dashboard on a remote endpoint.

Usage:
  peeklock connect [CONNECTION-STRING] [flags]

The connection string may also come from SERVICEBUS_CONNECTION_STRING. Accepted forms:
  Endpoint=sb://NAME.servicebus.windows.net/;SharedAccessKeyName=...;SharedAccessKey=...[;EntityPath=...]
  Endpoint=sb://localhost;...;UseDevelopmentEmulator=true
  amqp://user:pass@host:port
  NAME                                   a connection of the config file ([connections.NAME])

Flags:
`

func runConnect(args []string, out io.Writer) error {
	fs := newCommand("connect", connectUsage, out)
	var d dashboardFlags
	var sf sshFlags
	d.register(fs.FlagSet)
	sf.register(fs.FlagSet)
	namespace := fs.String("namespace", "", "connect to NAME.servicebus.windows.net with Microsoft Entra ID (DefaultAzureCredential)")
	adminURL := fs.String("admin-url", "", "base URL of the admin API (default: https://HOST, or http://HOST:5300 for emulators)")
	// The connection string may stand before or after the flags.
	var positional []string
	for {
		if err := fs.parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(positional) > 1 {
		return usageError{"connect: more than one connection string"}
	}
	conn, readOnly, err := connection(positional, *namespace, &d)
	if err != nil {
		return err
	}
	d.readOnly = d.readOnly || readOnly
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var entities []string
	if d.entity != "" {
		entities = []string{d.entity}
	}
	client, err := remote.Dial(ctx, remote.Config{Conn: conn, Entities: entities, AdminURL: *adminURL})
	if err != nil {
		return fmt.Errorf("connect to %s: %w", conn.Redacted(), err)
	}
	defer client.Close()
	if sf.addr != "" {
		log := slog.New(slog.NewTextHandler(os.Stderr, nil))
		return serveSSH(ctx, client, sf, d, "", log)
	}
	return runDashboard(ctx, client, d)
}

// connection finds what connect connects to: the connection string given,
// a named connection of the config file, SERVICEBUS_CONNECTION_STRING, or a
// namespace for Entra ID. A bad string is a usage error whose text never
// holds a secret.
func connection(positional []string, namespace string, d *dashboardFlags) (remote.ConnectionString, bool, error) {
	raw, readOnly := "", false
	if len(positional) == 1 {
		raw = strings.TrimSpace(positional[0])
		if !strings.Contains(raw, "=") && !strings.Contains(raw, "://") {
			named, err := namedConnection(raw, d)
			if err != nil {
				return remote.ConnectionString{}, false, err
			}
			raw, readOnly = named.ConnectionString, named.ReadOnly
			if d.entity == "" {
				d.entity = named.Entity
			}
		}
	}
	if raw == "" && namespace == "" {
		raw = strings.TrimSpace(os.Getenv("SERVICEBUS_CONNECTION_STRING"))
	}
	var conn remote.ConnectionString
	var err error
	switch {
	case raw != "" && namespace != "":
		return conn, false, usageError{"connect: give a connection string or --namespace, not both"}
	case namespace != "":
		conn, err = remote.FromNamespace(namespace)
	case raw != "":
		conn, err = remote.ParseConnectionString(raw)
	default:
		return conn, false, usageError{"connect: no connection string (give one, name one of the config file, set SERVICEBUS_CONNECTION_STRING, or use --namespace)"}
	}
	if err != nil {
		return conn, false, usageError{"connect: " + err.Error()}
	}
	return conn, readOnly, nil
}

// namedConnection looks a connection up by name in the config file.
func namedConnection(name string, d *dashboardFlags) (model.Connection, error) {
	path := d.uiConfig
	if path == "" {
		path = model.DefaultConfigPath()
	}
	cfg, err := model.LoadConfig(path)
	if err != nil {
		return model.Connection{}, usageError{fmt.Sprintf("connect: %q is not a connection string, and the config file cannot name it: %v", name, err)}
	}
	c, ok := cfg.Connections[name]
	if !ok || c.ConnectionString == "" {
		return model.Connection{}, usageError{fmt.Sprintf("connect: %q is neither a connection string nor a connection of %s", name, path)}
	}
	return c, nil
}
