package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/peeklock/peeklock/broker"
)

// newListCommand returns `peeklock list`: entities with their counts.
func newListCommand(env environ) *cobra.Command {
	e := endpointFlags{env: env}
	var watch bool
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Entities with their counts",
		Long: `peeklock list — the queues, topics and subscriptions with their message counts.

LOCKED counts the messages under a peek-lock now, whoever holds it (an application, a dashboard),
as the dashboard's Locked pane does; ACTIVE the others available to receive. The store (--data)
and peeklock serve know every lock; Service Bus tells none, and LOCKED shows "-" (ACTIVE then
includes the locked messages, as Service Bus counts them).

--watch lists them again every --interval until interrupted (a table is redrawn in place on a
terminal; json and jsonl write one list per refresh).` + endpointHelp,
		Example: `  # how many dead letters per entity?
  peeklock list --data ./data

  # the same as JSON, for jq
  peeklock list -c prod -o json | jq '.[] | select(.DeadLettered > 0) | .Path'

  # keep watching
  peeklock list --connection "$SERVICEBUS_CONNECTION_STRING" --watch`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if interval < 100*time.Millisecond {
				return usagef("--interval %s: at least 100ms", interval)
			}
			c, err := e.open(cmd.Context(), "list", "", false)
			if err != nil {
				return err
			}
			defer c.Close()
			return runList(cmd.Context(), c, cmd.OutOrStdout(), cmd.ErrOrStderr(), e.output, watch, interval)
		},
	}
	e.register(cmd.Flags(), outTable)
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "list again every --interval until interrupted")
	cmd.Flags().DurationVar(&interval, "interval", 2*time.Second, "how often --watch lists")
	return cmd
}

// entityJSON is an entity in list's JSON output.
type entityJSON struct {
	Path                 string `json:"Path"`
	Kind                 string `json:"Kind"`
	Active               int64  `json:"Active"`
	Locked               int64  `json:"Locked"`
	Deferred             int64  `json:"Deferred"`
	Scheduled            int64  `json:"Scheduled"`
	DeadLettered         int64  `json:"DeadLettered"`
	TransferDeadLettered int64  `json:"TransferDeadLettered"`
	Transfer             int64  `json:"Transfer"`
	SizeBytes            int64  `json:"SizeBytes"`
}

func toEntityJSON(e broker.Entity) entityJSON {
	n := e.Counts
	return entityJSON{Path: e.Path, Kind: e.Kind.String(), Active: n.Active, Locked: n.Locked, Deferred: n.Deferred,
		Scheduled: n.Scheduled, DeadLettered: n.DeadLettered, TransferDeadLettered: n.TransferDeadLettered,
		Transfer: n.Transfer, SizeBytes: n.SizeBytes}
}

// runList lists the entities on w once, or every interval while watch;
// the endpoint's notices go to errw.
func runList(ctx context.Context, c broker.Client, w, errw io.Writer, format string, watch bool, interval time.Duration) error {
	redraw := watch && format == outTable && isTerminal(w)
	_, askServe := remoteOf(c)
	locksKnown := true
	for {
		list, err := c.Entities(ctx)
		if err != nil {
			if ctx.Err() != nil && watch {
				return nil
			}
			return err
		}
		if askServe {
			// peeklock serve tells every lock; Service Bus none.
			if full, ok := serveEntities(ctx, c); ok {
				list = full
			} else {
				askServe, locksKnown = false, false
			}
		}
		if _, notice := broker.StatusOf(c); notice != "" {
			fmt.Fprintf(errw, "peeklock: %s\n", notice)
		}
		if redraw {
			fmt.Fprint(w, "\x1b[H\x1b[2J") // home, clear
			fmt.Fprintf(w, "%s  every %s\n\n", time.Now().Format("15:04:05"), interval)
		}
		if err := writeEntities(w, format, list, locksKnown); err != nil {
			return err
		}
		if !watch {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

// writeEntities writes the list in format; without locksKnown the table
// shows "-" for the locked counts (and JSON 0).
func writeEntities(w io.Writer, format string, list []broker.Entity, locksKnown bool) error {
	switch format {
	case outJSON:
		out := make([]entityJSON, len(list))
		for i, e := range list {
			out[i] = toEntityJSON(e)
		}
		return json.NewEncoder(w).Encode(out)
	case outJSONL:
		enc := json.NewEncoder(w)
		for _, e := range list {
			if err := enc.Encode(toEntityJSON(e)); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ENTITY\tKIND\tACTIVE\tLOCKED\tDEFERRED\tSCHEDULED\tDEAD-LETTERED\tTRANSFER-DL")
	for _, e := range list {
		n := e.Counts
		if e.Kind == broker.KindTopic {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t-\t-\n", cell(e.Path, 80), e.Kind)
			continue
		}
		locked := "-"
		if locksKnown {
			locked = fmt.Sprint(n.Locked)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%d\t%d\t%d\n", cell(e.Path, 80), e.Kind, n.Active, locked, n.Deferred, n.Scheduled, n.DeadLettered, n.TransferDeadLettered)
	}
	return tw.Flush()
}

// isTerminal reports whether the stream s is a terminal.
func isTerminal(s any) bool {
	f, ok := s.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}
