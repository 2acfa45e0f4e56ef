package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// addRunbookCommands adds the commands for runbooks and scripts: list,
// peek, tail, send, import, export, resubmit, deadletter, purge, history;
// they read their environment variables from env.
func addRunbookCommands(root *cobra.Command, env environ) {
	root.AddGroup(&cobra.Group{ID: "runbook", Title: "runbook commands"})
	for _, c := range []*cobra.Command{newListCommand(env), newPeekCommand(env), newTailCommand(env), newSendCommand(env),
		newImportCommand(env), newExportCommand(env), newResubmitCommand(env), newDeadLetterCommand(env), newPurgeCommand(env), newHistoryCommand(env)} {
		c.GroupID = "runbook"
		c.Flags().SortFlags = false
		if strings.Contains(c.Use, "ENTITY") {
			c.ValidArgsFunction = completeEntities(env)
		}
		root.AddCommand(c)
	}
}

// endpointHelp is the part of every runbook command's help that says what
// it works on.
const endpointHelp = `

It works on the embedded broker's store (--data DIR, while no other peeklock has it open) or on a
remote endpoint, as connect does: --connection with a connection string or the name of a
connection of the config file, else SERVICEBUS_CONNECTION_STRING, or --namespace for Microsoft
Entra ID. --read-only (or read_only = true in the config file) refuses every change.`

// endpointFlags choose the endpoint of a runbook command and how it
// writes its results; env is the environment of the command line
// (SERVICEBUS_CONNECTION_STRING, USER).
type endpointFlags struct {
	env        environ
	data       string
	connection string
	namespace  string
	adminURL   string
	uiConfig   string
	readOnly   bool
	output     string
}

// register adds the flags; outputDefault is the default --output.
func (e *endpointFlags) register(fs *pflag.FlagSet, outputDefault string) {
	fs.StringVarP(&e.output, "output", "o", outputDefault, "output format: table, json or jsonl")
	fs.StringVar(&e.data, "data", "", "the embedded broker's data directory")
	fs.StringVarP(&e.connection, "connection", "c", "", "a connection string, or the name of a connection of the config file (default $SERVICEBUS_CONNECTION_STRING)")
	markSecret(fs, "connection")
	fs.StringVar(&e.namespace, "namespace", "", "a namespace NAME.servicebus.windows.net, with Microsoft Entra ID (DefaultAzureCredential)")
	fs.StringVar(&e.adminURL, "admin-url", "", "base URL of the admin API (default: https://HOST, or http://HOST:5300 for emulators)")
	fs.BoolVar(&e.readOnly, "read-only", false, "refuse every change")
	fs.StringVar(&e.uiConfig, "ui-config", "", "config file with named connections (default $XDG_CONFIG_HOME/peeklock/config.toml)")
}

// Output formats.
const (
	outTable = "table"
	outJSON  = "json"
	outJSONL = "jsonl"
)

// checkOutput refuses an unknown --output.
func (e *endpointFlags) checkOutput() error {
	switch e.output {
	case outTable, outJSON, outJSONL:
		return nil
	}
	return usagef("--output %q: want table, json or jsonl", e.output)
}

// open connects to the endpoint for the command cmd and checks, before any
// work, that entity ("" for none) exists. A command that changes messages
// (writes) is refused on a read-only endpoint before it connects. The
// client is read-only when the flags or the named connection say so.
func (e *endpointFlags) open(ctx context.Context, cmd, entity string, writes bool) (broker.Client, error) {
	if err := e.checkOutput(); err != nil {
		return nil, err
	}
	if e.data != "" {
		if e.connection != "" || e.namespace != "" {
			return nil, usagef("%s: give --data or a connection (--connection, --namespace), not both", cmd)
		}
		if writes && e.readOnly {
			return nil, readOnlyRefusal(cmd)
		}
		eng, err := openDataDir(e.data)
		if err != nil {
			return nil, err
		}
		if err := checkEndpoint(ctx, eng, entity); err != nil {
			eng.Close()
			return nil, err
		}
		// What a runbook command does on the store is the command line's
		// (actor.go).
		return e.wrap(eng.As(actorName(actorCLI, e.env)), e.readOnly), nil
	}
	d := dashboardFlags{uiConfig: e.uiConfig, env: e.env}
	var positional []string
	if e.connection != "" {
		positional = []string{e.connection}
	}
	conn, readOnly, err := connection(cmd, positional, e.namespace, &d, e.env)
	if err != nil {
		if e.connection == "" && e.namespace == "" && e.env.get("SERVICEBUS_CONNECTION_STRING") == "" {
			return nil, usagef("%s: no endpoint: give --data DIR or --connection (a connection string or a name of the config file), or set SERVICEBUS_CONNECTION_STRING", cmd)
		}
		return nil, err
	}
	readOnly = readOnly || e.readOnly
	if writes && readOnly {
		return nil, readOnlyRefusal(cmd)
	}
	client, err := dial(ctx, e.env, conn, entity, e.adminURL, actorName(actorCLI, e.env))
	if err != nil {
		return nil, err
	}
	return e.wrap(client, readOnly), nil
}

func (e *endpointFlags) wrap(c broker.Client, readOnly bool) broker.Client {
	if readOnly {
		return broker.ReadOnly(c)
	}
	return c
}

// readOnlyRefusal is the error of a command that changes messages on a
// read-only endpoint.
func readOnlyRefusal(cmd string) error {
	return usagef("%s changes messages, and the endpoint is read-only (--read-only, or read_only in the config file)", cmd)
}

// openDataDir opens the embedded broker on an existing data directory.
func openDataDir(dir string) (*engine.Engine, error) {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, usagef("data directory %s does not exist", dir)
	}
	if err == nil && !fi.IsDir() {
		return nil, usagef("data directory %s is not a directory", dir)
	}
	st, err := store.OpenPebble(dir, store.PebbleOptions{})
	if err != nil {
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK) || strings.Contains(err.Error(), "lock") {
			return nil, fmt.Errorf("data directory %s is in use (by peeklock serve? use its connection string with --connection): %w", dir, err)
		}
		return nil, fmt.Errorf("open data directory %s: %w", dir, err)
	}
	eng, err := engine.New(engine.Options{Store: st})
	if err != nil {
		st.Close()
		return nil, err
	}
	return eng, nil
}

// oneEntity is the Args of a command on one entity.
func oneEntity(cmd *cobra.Command, args []string) error {
	switch len(args) {
	case 0:
		return usagef("%s: which entity? (peeklock %s ENTITY)", cmd.Name(), cmd.Name())
	case 1:
		return nil
	}
	return usagef("%s: unexpected argument %q", cmd.Name(), args[1])
}

// selector picks the messages of an entity a command reads: its active
// messages, or one of the other categories, or a dead-letter sub-queue.
type selector struct {
	dlq, transferDLQ, deferred, scheduled bool
}

func (s *selector) register(fs *pflag.FlagSet) {
	fs.BoolVar(&s.dlq, "dlq", false, "the dead-letter queue")
	fs.BoolVar(&s.transferDLQ, "transfer-dlq", false, "the transfer dead-letter queue")
	fs.BoolVar(&s.deferred, "deferred", false, "the deferred messages")
	fs.BoolVar(&s.scheduled, "scheduled", false, "the scheduled messages")
}

// request returns the browse of entity the selector picks, and a name for
// what it reads.
func (s selector) request(entity string) (broker.BrowseRequest, string, error) {
	n := 0
	for _, b := range []bool{s.dlq, s.transferDLQ, s.deferred, s.scheduled} {
		if b {
			n++
		}
	}
	if n > 1 {
		return broker.BrowseRequest{}, "", usagef("give one of --dlq, --transfer-dlq, --deferred and --scheduled")
	}
	req := broker.BrowseRequest{Entity: entity, Category: broker.CategoryActive}
	what := "the active messages of " + entity
	switch {
	case s.dlq:
		req.Entity = broker.SubQueueAddress(entity, broker.SubQueueDeadLetter)
		req.Category = broker.CategoryDeadLettered
		what = req.Entity
	case s.transferDLQ:
		req.Entity = broker.SubQueueAddress(entity, broker.SubQueueTransferDeadLetter)
		req.Category = broker.CategoryDeadLettered
		what = req.Entity
	case s.deferred:
		req.Category = broker.CategoryDeferred
		what = "the deferred messages of " + entity
	case s.scheduled:
		req.Category = broker.CategoryScheduled
		what = "the scheduled messages of " + entity
	}
	return req, what, nil
}

// subQueueOf returns the sub-queue that --dlq or --transfer-dlq chooses,
// the main queue for neither, and refuses both.
func subQueueOf(dlq, transferDLQ bool) (broker.SubQueue, error) {
	switch {
	case dlq && transferDLQ:
		return 0, usagef("give --dlq or --transfer-dlq, not both")
	case dlq:
		return broker.SubQueueDeadLetter, nil
	case transferDLQ:
		return broker.SubQueueTransferDeadLetter, nil
	}
	return broker.SubQueueMain, nil
}
