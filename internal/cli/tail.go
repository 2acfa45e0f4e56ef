package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/msgfilter"
)

// newTailCommand returns `peeklock tail`.
func newTailCommand(env environ) *cobra.Command {
	e := endpointFlags{env: env}
	var dlq, transferDLQ bool
	var from int64
	var max int
	var filter string
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "tail ENTITY",
		Short: "Follow new messages as they arrive, without locking them",
		Long: `peeklock tail — follow an entity's new messages as they arrive, like kubectl logs -f, without
locking them: it peeks every --interval (at once on the embedded broker's events) and writes each
message it has not seen, whatever its state (active, locked, deferred, scheduled); --dlq and
--transfer-dlq follow a dead-letter queue instead. It starts after the messages already there,
or at --from, and runs until interrupted, or until --max messages; while the endpoint is out of
reach it says so once and keeps trying. A message received and settled between two peeks is not
seen. json output is JSON lines.` + endpointHelp,
		Example: `  # watch what arrives in orders
  peeklock tail orders --data ./data

  # dead letters as they come, as JSON lines for jq
  peeklock tail orders --dlq -c prod -o jsonl | jq -r .ApplicationProperties.DeadLetterReason`,
		Args: oneEntity,
		RunE: func(cmd *cobra.Command, args []string) error {
			sub, err := subQueueOf(dlq, transferDLQ)
			if err != nil {
				return err
			}
			if interval < 50*time.Millisecond {
				return usagef("--interval %s: at least 50ms", interval)
			}
			if from < 0 || max < 0 {
				return usagef("--from and --max are 0 or more")
			}
			c, err := e.open(cmd.Context(), "tail", args[0], false)
			if err != nil {
				return err
			}
			defer c.Close()
			format := e.output
			if format == outJSON {
				format = outJSONL
			}
			t := &tailer{notes: cmd.ErrOrStderr(), c: c, entity: args[0], sub: sub, filter: msgfilter.Parse(filter), max: max, interval: interval}
			return t.run(cmd.Context(), newMessageSink(format, cmd.OutOrStdout()), from)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&dlq, "dlq", false, "follow the dead-letter queue")
	fs.BoolVar(&transferDLQ, "transfer-dlq", false, "follow the transfer dead-letter queue")
	fs.Int64Var(&from, "from", 0, "start at this sequence number (default: after the messages already there)")
	fs.IntVar(&max, "max", 0, "stop after this many messages (0: never)")
	fs.StringVar(&filter, "filter", "", "only the messages that match, as peek --filter")
	fs.DurationVar(&interval, "interval", time.Second, "how often to peek")
	e.register(fs, outTable)
	return cmd
}

// tailer follows the new messages of an entity (or of one of its
// dead-letter sub-queues) by peeking.
type tailer struct {
	notes    io.Writer // where it says that the endpoint is out of reach, and reached again
	c        broker.Client
	entity   string
	sub      broker.SubQueue
	filter   msgfilter.Filter
	max      int
	interval time.Duration
}

// sources are the browses that together show every message of the
// followed queue, whatever its state.
func (t *tailer) sources() []broker.BrowseRequest {
	if t.sub != broker.SubQueueMain {
		return []broker.BrowseRequest{{Entity: broker.SubQueueAddress(t.entity, t.sub), Category: broker.CategoryDeadLettered}}
	}
	var out []broker.BrowseRequest
	for _, cat := range []broker.Category{broker.CategoryActive, broker.CategoryLocked, broker.CategoryDeferred, broker.CategoryScheduled} {
		out = append(out, broker.BrowseRequest{Entity: t.entity, Category: cat})
	}
	return out
}

// next returns the messages from sequence number from on, in sequence
// order, across the sources.
func (t *tailer) next(ctx context.Context, from int64) ([]*broker.Message, error) {
	var all []*broker.Message
	for _, req := range t.sources() {
		for f := from; ; {
			req.FromSequence, req.Max = f, readPage
			msgs, err := t.c.Browse(ctx, req)
			if err != nil {
				return nil, err
			}
			all = append(all, msgs...)
			if len(msgs) < readPage {
				break
			}
			f = msgs[len(msgs)-1].SequenceNumber + 1
		}
	}
	slices.SortFunc(all, func(a, b *broker.Message) int { return int(a.SequenceNumber - b.SequenceNumber) })
	return slices.CompactFunc(all, func(a, b *broker.Message) bool { return a.SequenceNumber == b.SequenceNumber }), nil
}

// run writes the new messages to sink until ctx ends or max were written.
// Without a start (from 0), the messages already there are skipped.
func (t *tailer) run(ctx context.Context, sink messageSink, from int64) error {
	defer sink.Close()
	events, stop := t.c.Events()
	defer stop()
	if from == 0 {
		msgs, err := t.next(ctx, 0)
		if err != nil {
			return fmt.Errorf("tail %s: %w", t.entity, err)
		}
		if len(msgs) > 0 {
			from = msgs[len(msgs)-1].SequenceNumber + 1
		}
	}
	written := 0
	lost := false // the endpoint is out of reach: say so once
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if !t.concerns(ev) {
				continue
			}
		}
		msgs, err := t.next(ctx, from)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if !retryable(err) {
				return fmt.Errorf("tail %s: %w", t.entity, err)
			}
			if !lost {
				lost = true
				fmt.Fprintf(t.notes, "peeklock: tail %s: %s; trying again every %s until interrupted\n", t.entity, oneLine(err.Error()), t.interval)
			}
			timer.Reset(t.interval)
			continue
		}
		if lost {
			lost = false
			fmt.Fprintf(t.notes, "peeklock: tail %s: reached again\n", t.entity)
		}
		for _, m := range msgs {
			from = m.SequenceNumber + 1
			if !t.filter.Match(m) {
				continue
			}
			if err := sink.Write(m); err != nil {
				return err
			}
			written++
			if t.max > 0 && written >= t.max {
				return nil
			}
		}
		if err := flushSink(sink); err != nil {
			return err
		}
		timer.Reset(t.interval)
	}
}

// retryable reports whether err may pass when tried again unchanged (a
// lost connection, a busy or slow endpoint).
func retryable(err error) bool {
	var be *broker.Error
	return errors.As(err, &be) && be.Retryable()
}

// concerns reports whether an event may bring a new message to follow.
func (t *tailer) concerns(ev broker.Event) bool {
	path, _ := broker.SplitAddress(ev.Entity)
	if !strings.EqualFold(path, t.entity) && ev.Missed == 0 {
		return false
	}
	switch ev.Kind {
	case broker.EventSent, broker.EventScheduled, broker.EventDeadLettered, broker.EventForwarded:
		return true
	}
	return ev.Missed > 0
}

// flushSink writes out what a streaming sink holds, so that each message
// shows as it arrives.
func flushSink(s messageSink) error {
	if f, ok := s.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}
