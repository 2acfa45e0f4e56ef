package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/msgfilter"
)

// readFlags are the flags of the commands that read messages: which ones,
// from where, how many, and the filter.
type readFlags struct {
	sel    selector
	from   int64
	max    int
	filter string
}

func (r *readFlags) register(fs *pflag.FlagSet, maxDefault int) {
	r.sel.register(fs)
	fs.Int64Var(&r.from, "from", 0, "start at this sequence number")
	fs.IntVar(&r.max, "max", maxDefault, "the most messages (0: all)")
	fs.StringVar(&r.filter, "filter", "", "only the messages that match, as the dashboard's /: NAME=VALUE (a property), or text")
}

// request returns the browse of entity the flags ask for, the filter, and
// a name for what it reads.
func (r *readFlags) request(entity string) (broker.BrowseRequest, msgfilter.Filter, string, error) {
	req, what, err := r.sel.request(entity)
	if err != nil {
		return req, msgfilter.Filter{}, "", err
	}
	if r.from < 0 {
		return req, msgfilter.Filter{}, "", usagef("--from %d: a sequence number is 0 or more", r.from)
	}
	if r.max < 0 {
		return req, msgfilter.Filter{}, "", usagef("--max %d: 0 (all) or more", r.max)
	}
	req.FromSequence = r.from
	return req, msgfilter.Parse(r.filter), what, nil
}

// newPeekCommand returns `peeklock peek`.
func newPeekCommand(env environ) *cobra.Command {
	e := endpointFlags{env: env}
	var r readFlags
	cmd := &cobra.Command{
		Use:   "peek ENTITY",
		Short: "Show messages without locking them",
		Long: `peeklock peek — show an entity's messages without locking them: a peek never takes a lock
and never changes a delivery count.

It shows the active messages, or with --dlq, --transfer-dlq, --deferred or --scheduled those
ones, from --from on, at most --max. --filter keeps the messages that match (exit status 3
when none does).` + endpointHelp,
		Example: `  # the first 20 dead letters of orders
  peeklock peek orders --dlq --data ./data

  # the dead letters of one reason, as JSON lines
  peeklock peek orders --dlq --filter DeadLetterReason=MaxDeliveryCountExceeded -o jsonl -c prod

  # messages that mention a customer, anywhere in the body or properties
  peeklock peek orders --filter 'ACME Corp' --max 100`,
		Args: oneEntity,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := runRead(cmd.Context(), stdoutOf(cmd), cmd.ErrOrStderr(), "peek", args[0], &e, &r, false)
			return err
		},
	}
	r.register(cmd.Flags(), 20)
	e.register(cmd.Flags(), outTable)
	return cmd
}

// output opens where a command writes, once the command has checked
// everything; done closes it, told whether the command failed.
type output func() (w io.Writer, done func(failed bool) error, err error)

// stdoutOf is the output of cmd's stdout.
func stdoutOf(cmd *cobra.Command) output {
	return func() (io.Writer, func(bool) error, error) {
		return cmd.OutOrStdout(), func(bool) error { return nil }, nil
	}
}

// runRead writes the messages the flags ask for (peek, export) and returns
// how many it wrote: it exits 3 when a filter matched nothing.
func runRead(ctx context.Context, open output, errw io.Writer, name, entity string, e *endpointFlags, r *readFlags, progressBar bool) (n int, err error) {
	req, f, what, err := r.request(entity)
	if err != nil {
		return 0, err
	}
	c, err := e.open(ctx, name, entity, false)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	w, done, err := open()
	if err != nil {
		return 0, err
	}
	defer func() {
		if derr := done(err != nil); err == nil {
			err = derr
		}
	}()
	var bar *progress
	if progressBar {
		total := int64(0)
		if !f.Active() {
			total = countOf(ctx, c, req)
			if r.max > 0 {
				total = min(total, int64(r.max))
			}
		}
		bar = newProgress(errw, name+" "+what, total)
	}
	sink := newMessageSink(e.output, w)
	for p := range readMessages(ctx, c, req, f, r.max) {
		if p.err != nil {
			bar.finish()
			sink.Close()
			return 0, fmt.Errorf("%s %s: %w", name, what, p.err)
		}
		for _, m := range p.msgs {
			if err := sink.Write(m); err != nil {
				bar.finish()
				return 0, err
			}
		}
		bar.add(len(p.msgs))
	}
	bar.finish()
	if err := sink.Close(); err != nil {
		return 0, err
	}
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	if f.Active() && sink.Count() == 0 {
		return 0, noMatchError{fmt.Sprintf("%s: no message of %s matches %q", name, what, f.Raw())}
	}
	return sink.Count(), nil
}
