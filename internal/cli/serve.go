package cli

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"

	"github.com/spf13/cobra"

	"github.com/peeklock/peeklock/broker/metrics"
	"github.com/peeklock/peeklock/internal/gctune"
	"github.com/peeklock/peeklock/internal/proctune"
)

// newServeCommand returns `peeklock serve`: the broker without a screen,
// which finds the user's files in env.
func newServeCommand(env environ) *cobra.Command {
	var b brokerFlags
	b.front.env = env
	var sf sshFlags
	d := dashboardFlags{env: env}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "The broker without a screen: AMQP listener and admin API",
		Long: `peeklock serve — the broker without a screen.

It listens for AMQP 1.0 clients on --amqp and serves /health, Prometheus /metrics and the Service
Bus admin API on --admin, and prints the connection string applications use: the emulator's, with
the first --key.
--data DIR keeps every message across restarts; --config FILE creates the entities of a Service
Bus emulator Config.json; --ssh ADDR also serves the dashboard over SSH to --authorized-keys.
Everything is checked before a port opens.`,
		Example: `  # an emulator for your tests, on the emulator's ports
  peeklock serve --config Config.json

  # durable, with a key of your own that may only send
  peeklock serve --data /var/lib/peeklock --key app=c2VjcmV0:Send

  # the dashboard over SSH for on-call
  peeklock serve --data /var/lib/peeklock --ssh :2222 --authorized-keys ~/.ssh/authorized_keys`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), cmd.ErrOrStderr(), b, sf, d)
		},
	}
	fs := cmd.Flags()
	b.register(fs, "127.0.0.1:5672", "127.0.0.1:5300")
	sf.register(fs)
	d.registerUIConfig(fs, "dashboard config file for SSH sessions, [ssh] roles and [entra_id] roles (default $XDG_CONFIG_HOME/peeklock/config.toml)")
	fs.SortFlags = false
	return cmd
}

// runServe checks everything, binds every socket, and only then writes
// anything (the data directory, the local CA), opens the broker and says on
// logw that it is ready.
func runServe(ctx context.Context, logw io.Writer, b brokerFlags, sf sshFlags, d dashboardFlags) error {
	cfg, err := b.check()
	if err != nil {
		return err
	}
	if b.amqp == "" && b.admin == "" && b.front.tlsAddr == "" && sf.addr == "" {
		return usagef("serve: nothing to serve (--amqp, --admin, --tls-addr and --ssh are all empty)")
	}
	b.front.configPath = d.uiConfig
	plan, err := sf.check(&d, b.data)
	if err != nil {
		return err
	}
	if plan == nil && d.uiConfig != "" {
		if _, _, err := d.loadConfig(); err != nil {
			return err
		}
	}
	gctune.Start(ctx)
	log := slog.New(slog.NewTextHandler(logw, nil))
	ev, err := b.front.entraValidator(log)
	if err != nil {
		return err
	}
	// Bind first: a port in use fails here, before the data directory or
	// the local CA is written.
	ls, err := b.bind()
	if err != nil {
		return err
	}
	var sl net.Listener
	if plan != nil {
		if sl, err = plan.bind(); err != nil {
			ls.close()
			return err
		}
	}
	closeAll := func() {
		ls.close()
		if sl != nil {
			sl.Close()
		}
	}
	storeMetrics := metrics.NewStoreMetrics()
	eng, err := openEngine(ctx, b.data, cfg, storeMetrics, b.history)
	if err != nil {
		closeAll()
		return err
	}
	defer eng.Close()
	ep, err := newEndpoint(eng, b, ev, log)
	if err == nil {
		err = ep.openTLS(b, ls, log)
	}
	if err != nil {
		closeAll()
		return err
	}
	stop, failed := startListeners(eng, storeMetrics, b, ls, ep, log)
	defer stop()
	// A port that stops serving ends serve with its error, SSH included.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case err := <-failed:
			log.Error("a port stopped serving", "err", err)
			cancel(err)
		case <-ctx.Done():
		}
	}()
	proctune.Start(ctx) // once the store has sized its caches by the Ps
	if plan != nil {
		err := plan.serve(ctx, eng, sl, log)
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			return cause
		}
		return err
	}
	<-ctx.Done()
	if cause := context.Cause(ctx); !errors.Is(cause, context.Canceled) {
		return cause
	}
	log.Info("shutting down")
	return nil
}
