package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/peeklock/peeklock/broker"
)

// newHistoryCommand returns `peeklock history`.
func newHistoryCommand(env environ) *cobra.Command {
	e := endpointFlags{env: env}
	cmd := &cobra.Command{
		Use:   "history ENTITY SEQ",
		Short: "Show what happened to a message",
		Long: `peeklock history — show a stored message's history, oldest first: who sent it (a connection
and link of the listener, the dashboard, or a forward, fan-out or resubmit from where), each
delivery with its lock, renewals, abandons with the properties they changed, lock expiries and
losses (and why), deferral, dead-lettering (reason, and who: a client or the broker) and
resubmission. The history goes with its message: a settled message has none.

SEQ is the message's sequence number; ENTITY may be the entity or its dead-letter sub-queue. Only
the embedded broker keeps histories (serve --history=false turns them off): read them with --data
from a store no peeklock has open, or with serve's connection string while it runs. Service Bus
keeps none.` + endpointHelp,
		Example: `  # why did this message end up in the dead-letter queue?
  peeklock history orders 42 --data ./data

  # the same, as JSON
  peeklock history orders/$DeadLetterQueue 42 --data ./data -o json

  # while peeklock serve runs: its connection string
  peeklock history orders 42 -c "$CONNECTION_STRING_SERVE_PRINTED"`,
		Args: entityAndSequence,
		RunE: func(cmd *cobra.Command, args []string) error {
			seq, _ := strconv.ParseInt(args[1], 10, 64) // checked by entityAndSequence
			c, err := e.open(cmd.Context(), "history", args[0], false)
			if err != nil {
				return err
			}
			defer c.Close()
			var h broker.History
			if hr, ok := broker.HistoryOf(c); ok {
				h, err = hr.History(cmd.Context(), args[0], seq)
			} else if h, ok, err = serveHistory(cmd.Context(), c, args[0], seq); !ok {
				return fmt.Errorf("history: %s keeps no message history (only the embedded broker and peeklock serve do)", safe(c.Endpoint()))
			} else if err != nil {
				err = notServe(err, "histories")
			}
			if err != nil {
				return fmt.Errorf("history of %s sequence number %d: %w", args[0], seq, err)
			}
			return writeHistory(cmd.OutOrStdout(), e.output, h)
		},
	}
	e.register(cmd.Flags(), outTable)
	return cmd
}

// safe is s made safe for a terminal.
func safe(s string) string { return cell(s, 200) }

// entityAndSequence is the Args of history: an entity and a sequence
// number.
func entityAndSequence(cmd *cobra.Command, args []string) error {
	switch {
	case len(args) == 0:
		return usagef("%s: which entity and message? (peeklock %s ENTITY SEQ)", cmd.Name(), cmd.Name())
	case len(args) == 1:
		return usagef("%s: which message of %s? give its sequence number (peeklock %s ENTITY SEQ)", cmd.Name(), safe(args[0]), cmd.Name())
	case len(args) > 2:
		return usagef("%s: unexpected argument %q", cmd.Name(), args[2])
	}
	if n, err := strconv.ParseInt(args[1], 10, 64); err != nil || n < 0 {
		return usagef("%s: %q is not a sequence number", cmd.Name(), args[1])
	}
	return nil
}

// historyEventJSON is one event in history's JSON output.
type historyEventJSON struct {
	Time          time.Time  `json:"Time"`
	Event         string     `json:"Event"`
	SubQueue      string     `json:"SubQueue"`
	Actor         string     `json:"Actor"`
	LockToken     string     `json:"LockToken,omitempty"`
	LockedUntil   *time.Time `json:"LockedUntil,omitempty"`
	DeliveryCount uint32     `json:"DeliveryCount"`
	Reason        string     `json:"Reason,omitempty"`
	Detail        string     `json:"Detail,omitempty"`
}

// historyJSON is history's JSON output.
type historyJSON struct {
	Entity         string             `json:"Entity"`
	SequenceNumber int64              `json:"SequenceNumber"`
	Folded         int                `json:"Folded"`
	Events         []historyEventJSON `json:"Events"`
}

func toHistoryEventJSON(ev broker.HistoryEvent) historyEventJSON {
	out := historyEventJSON{Time: ev.Time, Event: ev.Kind.String(), SubQueue: ev.SubQueue.String(), Actor: ev.Actor,
		DeliveryCount: ev.DeliveryCount, Reason: ev.Reason, Detail: ev.Detail}
	if !ev.Token.IsZero() {
		out.LockToken = ev.Token.String()
	}
	if !ev.LockedUntil.IsZero() {
		t := ev.LockedUntil
		out.LockedUntil = &t
	}
	return out
}

// writeHistory writes h in format: one JSON document, one event per JSON
// line, or a table.
func writeHistory(w io.Writer, format string, h broker.History) error {
	events := make([]historyEventJSON, len(h.Events))
	for i, ev := range h.Events {
		events[i] = toHistoryEventJSON(ev)
	}
	switch format {
	case outJSON:
		return json.NewEncoder(w).Encode(historyJSON{Entity: h.Entity, SequenceNumber: h.Sequence, Folded: h.Folded, Events: events})
	case outJSONL:
		enc := json.NewEncoder(w)
		for _, ev := range events {
			if err := enc.Encode(ev); err != nil {
				return err
			}
		}
		return nil
	}
	if h.Folded > 0 {
		fmt.Fprintf(w, "(%d older events not kept)\n", h.Folded)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tEVENT\tBY\tDELIVERY\tDETAIL")
	for _, ev := range h.Events {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", ev.Time.UTC().Format("2006-01-02 15:04:05.000"), ev.Kind,
			cell(ev.Actor, 60), ev.DeliveryCount, cell(summaryWithToken(ev), 120))
	}
	return tw.Flush()
}

// summaryWithToken is the event's summary with the first part of its lock
// token, to tell the locks of one message apart.
func summaryWithToken(ev broker.HistoryEvent) string {
	s := ev.Summary()
	if ev.Token.IsZero() {
		return s
	}
	if s != "" {
		s += "; "
	}
	return s + "lock " + ev.Token.String()[:8]
}
