package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/demo"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/metrics"
)

// newRootCommand returns the peeklock command with every subcommand: the
// dashboard on the embedded broker when run alone. The commands read and
// write the streams s and read their environment variables from s.Env.
func newRootCommand(s Streams) *cobra.Command {
	env := environ(s.Env)
	d := dashboardFlags{env: env}
	var b brokerFlags
	b.front.env = env
	var noDemo bool
	root := &cobra.Command{
		Use:   "peeklock",
		Short: "A terminal dashboard for Service Bus queues, with an embedded broker",
		Long: `peeklock — a terminal dashboard for Service Bus queues, with an embedded broker.

Run alone, it opens the dashboard on the embedded broker (in memory unless --data DIR), with demo
entities and traffic unless --no-demo or --config FILE. --amqp and --admin open the broker's
listener too, so that an application can connect while you watch every lock.`,
		Example: `  # the demo: producers, flaky consumers, locks counting down
  peeklock

  # your own entities, kept on disk, with the listener open for your application
  peeklock --config Config.json --data ./data --amqp 127.0.0.1:5672 --admin 127.0.0.1:5300

  # a dashboard that cannot change anything, on one entity
  peeklock --data ./data --no-demo --entity orders --read-only`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRoot(cmd.Context(), terminalOf(cmd, env), d, b, noDemo)
		},
	}
	// Set before the built-in commands are made: cobra's completion
	// command takes its output when it is made.
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	fs := root.Flags()
	d.register(fs)
	b.register(fs, "", "")
	fs.BoolVar(&noDemo, "no-demo", false, "do not create demo entities or run demo traffic")
	fs.SortFlags = false
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError(err) })
	root.AddCommand(newServeCommand(env), newConnectCommand(env), newVersionCommand())
	addRunbookCommands(root, env)
	decorateBuiltins(root)
	return root
}

// noArgs refuses arguments: an unknown command for the root, an unexpected
// argument for the others.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if !cmd.HasParent() {
		msg := fmt.Sprintf("unknown command %q", args[0])
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "; did you mean " + quoteList(s) + "?"
		}
		return usageError{msg}
	}
	return usagef("%s: unexpected argument %q", cmd.Name(), args[0])
}

// runRoot runs the dashboard on the embedded broker. Everything the user
// typed is checked before the data directory is opened, the demo entities
// made, a socket bound or the screen taken.
func runRoot(ctx context.Context, term terminal, d dashboardFlags, b brokerFlags, noDemo bool) error {
	cfg, err := b.check()
	if err != nil {
		return err
	}
	opts, err := d.options()
	if err != nil {
		return err
	}
	created := dataDirCreated(b.data)
	storeMetrics := metrics.NewStoreMetrics()
	eng, err := openEngine(ctx, b.data, cfg, storeMetrics, b.history)
	if err != nil {
		return err
	}
	defer eng.Close()
	var dcfg demo.Config
	runDemo := b.config == "" && !noDemo
	if runDemo {
		dcfg = demo.DefaultConfig()
		if opts.Entity == "" {
			opts.Entity = dcfg.Workloads[0].Entity // the busiest queue, not the first by name
		}
	}
	if d.entity != "" {
		if err := checkEntityWith(ctx, eng, d.entity, dcfg.Entities); err != nil {
			eng.Close()
			if created {
				os.RemoveAll(b.data)
			}
			return err
		}
	}
	quiet := slog.New(slog.DiscardHandler)
	ev, err := b.front.entraValidator(quiet)
	if err != nil {
		return err
	}
	ep, err := newEndpoint(eng, b, ev, quiet)
	if err != nil {
		return err
	}
	ls, err := b.bind()
	if err != nil {
		return err
	}
	if err := ep.openTLS(b, ls, quiet); err != nil {
		return err
	}
	// The screen belongs to the dashboard: the listeners log nothing, and
	// a port that stops serving leaves the dashboard running.
	stopListeners, _ := startListeners(eng, storeMetrics, b, ls, ep, quiet)
	defer stopListeners()
	if runDemo {
		stop, err := startDemo(ctx, eng, dcfg, demo.Options{})
		if err != nil {
			return err
		}
		defer stop()
	}
	return runDashboard(ctx, term, eng, opts)
}

// startDemo makes the demo's entities and runs its traffic on eng, as the
// demo generator (the actor its messages' histories name), until stop.
func startDemo(ctx context.Context, eng *engine.Engine, cfg demo.Config, o demo.Options) (stop func(), err error) {
	if err := demo.Setup(ctx, eng, cfg); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	demoCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		demo.Run(demoCtx, eng.As(actorDemo), cfg, o)
	}()
	return func() { cancel(); <-done }, nil
}

// checkEntityWith is checkEndpoint on the embedded broker, counting the
// entities that are about to be made (the demo's) as there.
func checkEntityWith(ctx context.Context, eng *engine.Engine, entity string, more []broker.Entity) error {
	path, _ := broker.SplitAddress(entity)
	for _, e := range more {
		if strings.EqualFold(e.Path, path) {
			return nil
		}
	}
	list, err := eng.Entities(ctx)
	if err != nil {
		return err
	}
	for _, e := range list {
		if strings.EqualFold(e.Path, path) {
			return nil
		}
	}
	return unknownEntity(path, append(list, more...))
}
