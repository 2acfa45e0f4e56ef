package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/msgfilter"
)

// newDeadLetterCommand returns `peeklock deadletter`.
func newDeadLetterCommand(env environ) *cobra.Command {
	e := endpointFlags{env: env}
	var seqs []int64
	var filter, reason, description string
	var max int
	cmd := &cobra.Command{
		Use:   "deadletter ENTITY --reason R (--seq N | --filter F)",
		Short: "Move active messages to the dead-letter queue, with a reason",
		Long: `peeklock deadletter — receive chosen active messages of a queue or subscription under
peek-lock and dead-letter them with --reason (and --description), as the dashboard's d does: the
messages with the sequence numbers --seq (repeat it, or a comma list), or those that match
--filter (as peek --filter; at most --max), found first by a peek. Only they are locked: on the
embedded broker by sequence number, elsewhere received from the head of the queue, the others
given back at once without counting a delivery. A message that is gone, locked by another
receiver, deferred or scheduled is reported and left alone (exit status 1); a filter that matches
nothing exits 3.` + endpointHelp,
		Example: `  # a triage demo without a program: two dead letters of orders
  peeklock deadletter orders --seq 3,5 --reason PoisonMessage --data ./data

  # every order of tenant acme, with a description
  peeklock deadletter orders --filter tenant=acme --reason Quarantine \
    --description "tenant acme is being migrated" -c prod`,
		Args: oneEntity,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case reason == "":
				return usagef("deadletter: give the dead-letter reason (--reason R)")
			case len(seqs) == 0 && filter == "":
				return usagef("deadletter: which messages? give --seq N or --filter F")
			case len(seqs) > 0 && filter != "":
				return usagef("deadletter: give --seq or --filter, not both")
			case max < 0:
				return usagef("--max is 0 (all) or more")
			}
			for _, s := range seqs {
				if s < 1 {
					return usagef("--seq %d: sequence numbers start at 1", s)
				}
			}
			c, err := e.open(cmd.Context(), "deadletter", args[0], true)
			if err != nil {
				return err
			}
			defer c.Close()
			d := deadLetterRun{errw: cmd.ErrOrStderr(), c: c, entity: args[0], reason: reason, description: description, format: e.output}
			if filter != "" {
				f := msgfilter.Parse(filter)
				if seqs, err = d.matching(cmd.Context(), f, max); err != nil {
					return err
				}
				if len(seqs) == 0 {
					return noMatchError{fmt.Sprintf("deadletter: no active message of %s matches %q", args[0], f.Raw())}
				}
			}
			return d.run(cmd.Context(), cmd.OutOrStdout(), seqs)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&reason, "reason", "", "the dead-letter reason (DeadLetterReason)")
	fs.StringVar(&description, "description", "", "the dead-letter description (DeadLetterErrorDescription)")
	fs.Int64SliceVar(&seqs, "seq", nil, "the sequence number of a message to dead-letter; repeat, or a comma list")
	fs.StringVar(&filter, "filter", "", "the active messages that match, as peek --filter")
	fs.IntVar(&max, "max", 0, "with --filter, at most this many (0: all)")
	e.register(fs, outTable)
	return cmd
}

// deadLetterRun is one deadletter command.
type deadLetterRun struct {
	errw                io.Writer // the summary
	c                   broker.Client
	entity              string
	reason, description string
	format              string
}

// deadLetterJSON is one message's outcome in json and jsonl.
type deadLetterJSON struct {
	SequenceNumber int64  `json:"SequenceNumber"`
	MessageID      string `json:"MessageId,omitempty"`
	DeadLettered   bool   `json:"DeadLettered"`
	Error          string `json:"Error,omitempty"`
}

// matching peeks the entity's active messages for those that match f, at
// most max (0: all), and returns their sequence numbers.
func (d *deadLetterRun) matching(ctx context.Context, f msgfilter.Filter, max int) ([]int64, error) {
	var seqs []int64
	req := broker.BrowseRequest{Entity: d.entity, Category: broker.CategoryActive}
	for p := range readMessages(ctx, d.c, req, f, max) {
		if p.err != nil {
			return nil, fmt.Errorf("deadletter: peek %s: %w", d.entity, p.err)
		}
		for _, m := range p.msgs {
			seqs = append(seqs, m.SequenceNumber)
		}
	}
	return seqs, ctx.Err()
}

// run locks the messages seqs and dead-letters them, writing one outcome
// per message and a summary on stderr.
func (d *deadLetterRun) run(ctx context.Context, w io.Writer, seqs []int64) error {
	start := time.Now()
	locked, missing, lockErr := broker.LockChosen(ctx, d.c, d.entity, seqs, 8, 0)
	var out []deadLetterJSON
	for _, it := range locked {
		err := d.c.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: it.Address, Token: it.Msg.LockToken,
			Reason: d.reason, Description: d.description})
		o := deadLetterJSON{SequenceNumber: it.Msg.SequenceNumber, MessageID: it.Msg.MessageID, DeadLettered: err == nil}
		if err != nil {
			o.Error = err.Error()
		}
		out = append(out, o)
	}
	why := "not among the available messages (gone, locked by another receiver, deferred or scheduled)"
	if lockErr != nil {
		why = lockErr.Error()
	}
	for _, s := range missing {
		out = append(out, deadLetterJSON{SequenceNumber: s, Error: why})
	}
	if err := d.write(w, out); err != nil {
		return err
	}
	ok, failed := 0, 0
	for _, o := range out {
		if o.DeadLettered {
			ok++
		} else {
			failed++
		}
	}
	dlq := broker.SubQueueAddress(d.entity, broker.SubQueueDeadLetter)
	fmt.Fprintf(d.errw, "peeklock: dead-lettered %d message(s) of %s to %s, %d failed, in %s\n", ok, d.entity, dlq, failed, time.Since(start).Round(time.Millisecond))
	if failed > 0 {
		return fmt.Errorf("deadletter: %d of %d failed; first: sequence number %d: %s", failed, len(out), firstFailed(out).SequenceNumber, firstFailed(out).Error)
	}
	return nil
}

// firstFailed is the first outcome that failed.
func firstFailed(out []deadLetterJSON) deadLetterJSON {
	for _, o := range out {
		if !o.DeadLettered {
			return o
		}
	}
	return deadLetterJSON{}
}

// write writes the outcomes in the run's format.
func (d *deadLetterRun) write(w io.Writer, out []deadLetterJSON) error {
	switch d.format {
	case outJSON:
		arr := newJSONArray(w)
		for _, o := range out {
			if err := arr.add(o); err != nil {
				return err
			}
		}
		return arr.Close()
	case outJSONL:
		for _, o := range out {
			if err := writeResult(w, outJSONL, o, nil); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tMESSAGE-ID\tOUTCOME")
	for _, o := range out {
		outcome := "dead-lettered (" + d.reason + ")"
		if !o.DeadLettered {
			outcome = "FAILED: " + o.Error
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\n", o.SequenceNumber, cell(o.MessageID, 40), cell(outcome, 200))
	}
	return tw.Flush()
}
