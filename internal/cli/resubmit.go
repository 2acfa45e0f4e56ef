package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/msgfilter"
)

// newResubmitCommand returns `peeklock resubmit`.
func newResubmitCommand(env environ) *cobra.Command {
	e := endpointFlags{env: env}
	var dlq, transferDLQ, dryRun bool
	var filter string
	var max, concurrency int
	cmd := &cobra.Command{
		Use:   "resubmit ENTITY",
		Short: "Send dead-lettered messages back, without losing any",
		Long: `peeklock resubmit — send an entity's dead-lettered messages back to it, as the dashboard's s and
S do: each one is locked, its copy sent and accepted, and only then is the original completed, so
a failure leaves a duplicate (same MessageId), never a gap.

It takes the dead-letter queue, then the transfer dead-letter queue (--dlq or --transfer-dlq for
one of them); --filter the messages that match (exit status 3 when none does), found first by a
peek; --max at most that many. --dry-run lists what it would resubmit and touches nothing.
Messages received on the way that are not to be resubmitted are given back unchanged at the end
(their locks renewed meanwhile). Exit status 1 when a resubmit failed.` + endpointHelp,
		Example: `  # what would go back?
  peeklock resubmit orders --filter DeadLetterReason=MaxDeliveryCountExceeded --dry-run --data ./data

  # send them back
  peeklock resubmit orders --filter DeadLetterReason=MaxDeliveryCountExceeded -c prod

  # the first 100 of the dead-letter queue, as JSON lines of outcomes
  peeklock resubmit orders --dlq --max 100 -o jsonl -c prod`,
		Args: oneEntity,
		RunE: func(cmd *cobra.Command, args []string) error {
			sub, err := subQueueOf(dlq, transferDLQ)
			if err != nil {
				return err
			}
			if max < 0 || concurrency < 1 {
				return usagef("--max is 0 (all) or more, --concurrency 1 or more")
			}
			// Neither flag: both dead-letter sub-queues.
			subs := []broker.SubQueue{broker.SubQueueDeadLetter, broker.SubQueueTransferDeadLetter}
			if sub != broker.SubQueueMain {
				subs = []broker.SubQueue{sub}
			}
			c, err := e.open(cmd.Context(), "resubmit", args[0], !dryRun)
			if err != nil {
				return err
			}
			defer c.Close()
			r := resubmitRun{errw: cmd.ErrOrStderr(), c: c, entity: args[0], subs: subs, filter: msgfilter.Parse(filter), max: max, concurrency: concurrency, format: e.output}
			if dryRun {
				return r.dryRun(cmd.Context(), cmd.OutOrStdout())
			}
			return r.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&dlq, "dlq", false, "only the dead-letter queue")
	fs.BoolVar(&transferDLQ, "transfer-dlq", false, "only the transfer dead-letter queue")
	fs.StringVar(&filter, "filter", "", "only the messages that match, as peek --filter")
	fs.IntVar(&max, "max", 0, "at most this many (0: all)")
	fs.BoolVar(&dryRun, "dry-run", false, "list what would be resubmitted; change nothing")
	fs.IntVar(&concurrency, "concurrency", 8, "resubmits in flight at once")
	e.register(fs, outTable)
	return cmd
}

// resubmitRun is one resubmit command.
type resubmitRun struct {
	errw        io.Writer // the progress bar and the summary
	c           broker.Client
	entity      string
	subs        []broker.SubQueue
	filter      msgfilter.Filter
	max         int
	concurrency int
	format      string
}

// what names the sub-queues for messages.
func (r *resubmitRun) what() string {
	if len(r.subs) == 1 {
		return broker.SubQueueAddress(r.entity, r.subs[0])
	}
	return "the dead-letter queues of " + r.entity
}

// matching peeks the dead-letter sub-queues for the messages the filter
// and --max pick, writing each to sink when given.
func (r *resubmitRun) matching(ctx context.Context, sink messageSink) (map[int64]broker.SubQueue, error) {
	found := make(map[int64]broker.SubQueue)
	for _, sub := range r.subs {
		req := broker.BrowseRequest{Entity: broker.SubQueueAddress(r.entity, sub), Category: broker.CategoryDeadLettered}
		left := 0
		if r.max > 0 {
			left = r.max - len(found)
			if left == 0 {
				break
			}
		}
		for p := range readMessages(ctx, r.c, req, r.filter, left) {
			if p.err != nil {
				return nil, fmt.Errorf("resubmit: peek %s: %w", req.Entity, p.err)
			}
			for _, m := range p.msgs {
				found[m.SequenceNumber] = sub
				if sink != nil {
					if err := sink.Write(m); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	return found, ctx.Err()
}

// dryRun lists the messages a resubmit would take.
func (r *resubmitRun) dryRun(ctx context.Context, w io.Writer) error {
	sink := newMessageSink(r.format, w)
	found, err := r.matching(ctx, sink)
	if cerr := sink.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if r.filter.Active() && len(found) == 0 {
		return noMatchError{fmt.Sprintf("resubmit: no message of %s matches %q", r.what(), r.filter.Raw())}
	}
	fmt.Fprintf(r.errw, "peeklock: would resubmit %d message(s) to %s (--dry-run: nothing changed)\n", len(found), broker.ResubmitTarget(r.entity))
	return nil
}

// outcomeJSON is one resubmit's outcome in json and jsonl.
type outcomeJSON struct {
	SequenceNumber int64  `json:"SequenceNumber"`
	MessageID      string `json:"MessageId"`
	From           string `json:"From"`
	To             string `json:"To"`
	Resubmitted    bool   `json:"Resubmitted"`
	Error          string `json:"Error,omitempty"`
}

// run resubmits: with a filter, the matching messages a peek found first.
func (r *resubmitRun) run(ctx context.Context, w io.Writer) error {
	opts := broker.ResubmitOptions{SubQueues: r.subs, Max: r.max, Concurrency: r.concurrency, Now: time.Now}
	total := int64(0)
	if r.filter.Active() {
		found, err := r.matching(ctx, nil)
		if err != nil {
			return err
		}
		if len(found) == 0 {
			return noMatchError{fmt.Sprintf("resubmit: no message of %s matches %q", r.what(), r.filter.Raw())}
		}
		opts.Only, total = found, int64(len(found))
	} else {
		for _, sub := range r.subs {
			total += countOf(ctx, r.c, broker.BrowseRequest{Entity: broker.SubQueueAddress(r.entity, sub), Category: broker.CategoryDeadLettered})
		}
		if r.max > 0 {
			total = min(total, int64(r.max))
		}
	}
	target := broker.ResubmitTarget(r.entity)
	out := newOutcomes(w, r.format)
	bar := newProgress(r.errw, "resubmit "+r.what(), total)
	start := time.Now()
	err := broker.ResubmitFrom(ctx, r.c, r.entity, opts, func(dlq string, m *broker.Message, err error) {
		o := outcomeJSON{SequenceNumber: m.SequenceNumber, MessageID: m.MessageID, From: dlq, To: target, Resubmitted: err == nil}
		if err != nil {
			o.Error = err.Error()
		}
		out.add(o)
		bar.add(1)
	})
	bar.finish()
	if cerr := out.close(); err == nil {
		err = cerr
	}
	ok, failed := out.ok, out.failed
	fmt.Fprintf(r.errw, "peeklock: resubmitted %d message(s) to %s, %d failed, in %s\n", ok, target, failed, time.Since(start).Round(time.Millisecond))
	switch {
	case err != nil:
		return fmt.Errorf("resubmit: %w (%d resubmitted before)", err, ok)
	case ctx.Err() != nil:
		return fmt.Errorf("resubmit: interrupted after %d", ok)
	case failed > 0:
		return fmt.Errorf("resubmit: %d of %d failed; first: %s", failed, ok+failed, out.first)
	}
	return nil
}

// outcomes writes resubmit outcomes as they come (from several goroutines).
type outcomes struct {
	mu     sync.Mutex
	format string
	tw     *tabwriter.Writer
	arr    *jsonArray
	enc    *json.Encoder
	ok     int
	failed int
	first  string
}

func newOutcomes(w io.Writer, format string) *outcomes {
	o := &outcomes{format: format}
	switch format {
	case outJSON:
		o.arr = newJSONArray(w)
	case outJSONL:
		o.enc = json.NewEncoder(w)
	default:
		o.tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(o.tw, "SEQ\tMESSAGE-ID\tFROM\tOUTCOME")
	}
	return o
}

func (o *outcomes) add(v outcomeJSON) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if v.Resubmitted {
		o.ok++
	} else {
		o.failed++
		if o.first == "" {
			o.first = fmt.Sprintf("sequence number %d: %s", v.SequenceNumber, v.Error)
		}
	}
	switch {
	case o.arr != nil:
		_ = o.arr.add(v)
	case o.enc != nil:
		_ = o.enc.Encode(v)
	default:
		outcome := "resubmitted to " + v.To
		if !v.Resubmitted {
			outcome = "FAILED: " + v.Error
		}
		fmt.Fprintf(o.tw, "%d\t%s\t%s\t%s\n", v.SequenceNumber, cell(v.MessageID, 40), v.From, cell(outcome, 200))
	}
}

func (o *outcomes) close() error {
	switch {
	case o.arr != nil:
		return o.arr.Close()
	case o.tw != nil:
		return o.tw.Flush()
	}
	return nil
}
