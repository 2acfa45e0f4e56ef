package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/msgjson"
)

// newImportCommand returns `peeklock import`.
func newImportCommand(env environ) *cobra.Command {
	e := endpointFlags{env: env}
	var batch int
	cmd := &cobra.Command{
		Use:   "import ENTITY FILE.jsonl",
		Short: "Send the messages an export wrote",
		Long: `peeklock import — send the messages of a JSON-lines file (what export and the dashboard's x
write; "-" reads stdin) to a queue or topic, in batches of --batch, each accepted before the next
goes. What a sender sets comes back (ids, subject, properties, session, time to live, a future
scheduled time, the body); the broker's own properties and the dead-letter reason do not, as for a
resubmit. A bad line stops the import before anything is sent; a failed send names how many went
before it.` + endpointHelp,
		Example: `  # put back what was exported before a purge
  peeklock import orders orders-dlq.jsonl --data ./data

  # copy a queue from one namespace to another
  peeklock export orders -c staging | peeklock import orders - -c dev`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("import: want ENTITY and FILE.jsonl (peeklock import ENTITY FILE.jsonl)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if batch < 1 || batch > 5000 {
				return usagef("--batch %d: between 1 and 5000", batch)
			}
			msgs, err := readImport(args[1], cmd.InOrStdin())
			if err != nil {
				return err
			}
			c, err := e.open(cmd.Context(), "import", args[0], true)
			if err != nil {
				return err
			}
			defer c.Close()
			return runImport(cmd.Context(), c, cmd.OutOrStdout(), cmd.ErrOrStderr(), e.output, args[0], msgs, batch)
		},
	}
	cmd.Flags().IntVar(&batch, "batch", 100, "messages per send")
	e.register(cmd.Flags(), outTable)
	return cmd
}

// readImport reads and checks every message of the file (or stdin for
// "-") before anything is sent.
func readImport(path string, stdin io.Reader) ([]*broker.Message, error) {
	r := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, usagef("import: %v", err)
		}
		defer f.Close()
		r = f
	}
	var msgs []*broker.Message
	jr := msgjson.NewReader(r)
	for {
		m, err := jr.Next()
		if errors.Is(err, io.EOF) {
			return msgs, nil
		}
		if err != nil {
			return nil, usagef("import %s: %v", path, err)
		}
		msgs = append(msgs, m)
	}
}

// importJSON is what import writes in json and jsonl.
type importJSON struct {
	Entity   string `json:"Entity"`
	Imported int    `json:"Imported"`
}

// runImport sends msgs to entity in batches.
func runImport(ctx context.Context, c broker.Client, w, errw io.Writer, format, entity string, msgs []*broker.Message, batch int) error {
	bar := newProgress(errw, "import "+entity, int64(len(msgs)))
	sent := 0
	for sent < len(msgs) {
		end := min(sent+batch, len(msgs))
		if err := c.Send(ctx, entity, msgs[sent:end]); err != nil {
			bar.finish()
			return fmt.Errorf("import to %s: %d of %d messages sent; the batch from message %d on failed: %w", entity, sent, len(msgs), sent+1, err)
		}
		bar.add(end - sent)
		sent = end
	}
	bar.finish()
	return writeResult(w, format, importJSON{Entity: entity, Imported: sent}, func() string {
		return fmt.Sprintf("imported %d message(s) to %s", sent, entity)
	})
}
