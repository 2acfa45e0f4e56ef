package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/peeklock/peeklock/broker"
)

// purgeJSON is what purge writes in json and jsonl.
type purgeJSON struct {
	Entity string `json:"Entity"`
	Purged int64  `json:"Purged"`
}

// newPurgeCommand returns `peeklock purge`.
func newPurgeCommand(env environ) *cobra.Command {
	e := endpointFlags{env: env}
	var dlq, transferDLQ, yes bool
	cmd := &cobra.Command{
		Use:   "purge ENTITY --yes",
		Short: "Remove every message of a queue or of its dead-letter queue",
		Long: `peeklock purge — remove every message of an entity (active, deferred and scheduled), or with
--dlq or --transfer-dlq of one of its dead-letter queues. It asks for --yes; export first to keep a
copy.` + endpointHelp,
		Example: `  # export the dead-letter queue, then purge it
  peeklock export orders --dlq --data ./data --out orders-dlq.jsonl &&
    peeklock purge orders --dlq --yes --data ./data

  # the whole queue of a named connection, as JSON
  peeklock purge orders --yes -c prod -o json`,
		Args: oneEntity,
		RunE: func(cmd *cobra.Command, args []string) error {
			sub, err := subQueueOf(dlq, transferDLQ)
			if err != nil {
				return err
			}
			what := broker.SubQueueAddress(args[0], sub)
			if !yes {
				return usagef("purge removes every message of %s: add --yes", what)
			}
			c, err := e.open(cmd.Context(), "purge", args[0], true)
			if err != nil {
				return err
			}
			defer c.Close()
			n, err := c.Purge(cmd.Context(), args[0], sub)
			if err != nil {
				return fmt.Errorf("purge %s: %w (%d removed)", what, err, n)
			}
			return writeResult(cmd.OutOrStdout(), e.output, purgeJSON{Entity: what, Purged: n}, func() string {
				return fmt.Sprintf("purged %d message(s) from %s", n, what)
			})
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&dlq, "dlq", false, "purge the dead-letter queue")
	fs.BoolVar(&transferDLQ, "transfer-dlq", false, "purge the transfer dead-letter queue")
	fs.BoolVarP(&yes, "yes", "y", false, "yes, remove them")
	e.register(fs, outTable)
	return cmd
}
