package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/peeklock/peeklock/broker/remote"
	"github.com/peeklock/peeklock/internal/config"
)

// newConnectCommand returns `peeklock connect`: the dashboard on a remote
// endpoint.
func newConnectCommand(env environ) *cobra.Command {
	d := dashboardFlags{env: env}
	var sf sshFlags
	var namespace, adminURL string
	var websockets bool
	cmd := &cobra.Command{
		Use:   "connect [CONNECTION-STRING]",
		Short: "The dashboard on a remote endpoint (Azure, an emulator, generic AMQP 1.0)",
		Long: `peeklock connect — the dashboard on a remote endpoint.

The connection string may also come from SERVICEBUS_CONNECTION_STRING. Accepted forms:
  Endpoint=sb://NAME.servicebus.windows.net/;SharedAccessKeyName=...;SharedAccessKey=...[;EntityPath=...]
  Endpoint=sb://localhost;...;UseDevelopmentEmulator=true
  amqp://user:pass@host:port
  NAME                                   a connection of the config file ([connections.NAME])

The endpoint, the credential and --entity are checked before the screen opens.`,
		Example: `  # peeklock serve, or the Service Bus emulator (the string serve prints)
  peeklock connect 'Endpoint=sb://localhost;SharedAccessKeyName=…;SharedAccessKey=…;UseDevelopmentEmulator=true'

  # the same string from the environment
  SERVICEBUS_CONNECTION_STRING='Endpoint=sb://…' peeklock connect --entity orders

  # a connection of the config file, read-only if it says so
  peeklock connect prod --entity orders

  # Azure with Microsoft Entra ID (DefaultAzureCredential)
  peeklock connect --namespace mybus.servicebus.windows.net`,
		Args: maxOneConnection,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConnect(cmd.Context(), terminalOf(cmd, env), cmd.ErrOrStderr(), args, d, sf, namespace, adminURL, websockets)
		},
	}
	fs := cmd.Flags()
	d.register(fs)
	sf.register(fs)
	fs.StringVar(&namespace, "namespace", "", "connect to NAME.servicebus.windows.net with Microsoft Entra ID (DefaultAzureCredential)")
	fs.StringVar(&adminURL, "admin-url", "", "base URL of the admin API (default: https://HOST[:PORT], or http://HOST:5300 for emulators without a port)")
	fs.BoolVar(&websockets, "websockets", false, "use AMQP over WebSockets (wss://HOST:443/$servicebus/websocket for Azure, the AMQP port elsewhere), through HTTPS_PROXY when set")
	fs.SortFlags = false
	return cmd
}

// maxOneConnection accepts at most one connection string.
func maxOneConnection(cmd *cobra.Command, args []string) error {
	if len(args) > 1 {
		return usagef("%s: more than one connection string", cmd.Name())
	}
	return nil
}

// runConnect runs the dashboard of connect on term, or serves it over SSH
// with its log on logw.
func runConnect(ctx context.Context, term terminal, logw io.Writer, args []string, d dashboardFlags, sf sshFlags, namespace, adminURL string, websockets bool) error {
	conn, readOnly, err := connection("connect", args, namespace, &d, term.env)
	if err != nil {
		return err
	}
	conn.WebSockets = conn.WebSockets || websockets
	d.readOnly = d.readOnly || readOnly
	opts, err := d.options()
	if err != nil {
		return err
	}
	plan, err := sf.check(&d, "")
	if err != nil {
		return err
	}
	client, err := dial(ctx, term.env, conn, d.entity, adminURL, actorName(actorDashboard, term.env))
	if err != nil {
		return err
	}
	defer client.Close()
	if plan != nil {
		l, err := plan.bind()
		if err != nil {
			return err
		}
		return plan.serve(ctx, client, l, slog.New(slog.NewTextHandler(logw, nil)))
	}
	return runDashboard(ctx, term, client, opts)
}

// dial connects to conn as who (the AMQP container id, which serve's
// message histories name) and checks, before anything else happens, that
// the endpoint takes the credential and has entity ("" for none).
func dial(ctx context.Context, env environ, conn remote.ConnectionString, entity, adminURL, who string) (*remote.Client, error) {
	var entities []string
	if entity != "" {
		entities = []string{entity}
	}
	cfg := connectConfig(env, conn, entities, adminURL)
	cfg.ContainerID = "peeklock " + who
	client, err := remote.Dial(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", conn.Redacted(), endpointError(err))
	}
	if err := checkEndpoint(ctx, client, entity); err != nil {
		client.Close()
		return nil, err
	}
	return client, nil
}

// connection finds what the command cmd (connect, or a runbook command)
// connects to: the connection string given, a named connection of the
// config file (its entity becomes d.entity when none is given),
// SERVICEBUS_CONNECTION_STRING of env, or a namespace for Entra ID. A bad
// string is a usage error whose text never holds a secret.
func connection(cmd string, positional []string, namespace string, d *dashboardFlags, env environ) (remote.ConnectionString, bool, error) {
	raw, readOnly := "", false
	if len(positional) == 1 {
		raw = strings.TrimSpace(positional[0])
		if !strings.Contains(raw, "=") && !strings.Contains(raw, "://") {
			named, err := namedConnection(cmd, raw, d)
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
		raw = strings.TrimSpace(env.get("SERVICEBUS_CONNECTION_STRING"))
	}
	var conn remote.ConnectionString
	var err error
	switch {
	case raw != "" && namespace != "":
		return conn, false, usagef("%s: give a connection string or --namespace, not both", cmd)
	case namespace != "":
		conn, err = remote.FromNamespace(namespace)
	case raw != "":
		conn, err = remote.ParseConnectionString(raw)
	default:
		return conn, false, usagef("%s: no connection string (give one, name one of the config file, set SERVICEBUS_CONNECTION_STRING, or use --namespace)", cmd)
	}
	if err != nil {
		return conn, false, usageError{cmd + ": " + localMessage(err)}
	}
	return conn, readOnly, nil
}

// namedConnection looks a connection up by name in the config file.
func namedConnection(cmd, name string, d *dashboardFlags) (config.Connection, error) {
	path := d.configPath()
	cfg, err := config.Load(path)
	if err != nil {
		return config.Connection{}, usagef("%s: %q is not a connection string, and the config file cannot name it: %v", cmd, name, err)
	}
	c, ok := cfg.Connections[name]
	if !ok || c.ConnectionString == "" {
		msg := fmt.Sprintf("%s: %q is neither a connection string nor a connection of %s", cmd, name, path)
		names := make([]string, 0, len(cfg.Connections))
		for n := range cfg.Connections {
			names = append(names, n)
		}
		if near := closest(name, names, 3); len(near) > 0 {
			msg += "; did you mean " + quoteList(near) + "?"
		}
		return config.Connection{}, usageError{msg}
	}
	return c, nil
}
