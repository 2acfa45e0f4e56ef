package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// newExportCommand returns `peeklock export`.
func newExportCommand(env environ) *cobra.Command {
	e := endpointFlags{env: env}
	var r readFlags
	var out string
	cmd := &cobra.Command{
		Use:   "export ENTITY",
		Short: "Write messages as JSON lines, without locking them",
		Long: `peeklock export — write an entity's messages as JSON lines, the dashboard's export format (x),
which import sends again. Like peek, it never locks a message nor changes a delivery count, and
takes the same selectors; it writes every message unless --max, to stdout or to a new file
(--out, ending with "exported N messages to FILE"), with a progress bar on stderr when that is
a terminal. --filter keeps the messages that match (exit status 3 when none does).` + endpointHelp,
		Example: `  # keep the dead letters before purging them
  peeklock export orders --dlq --data ./data --out orders-dlq.jsonl

  # only those of one reason
  peeklock export orders --dlq --filter DeadLetterReason=TTLExpiredException -c prod > expired.jsonl`,
		Args: oneEntity,
		RunE: func(cmd *cobra.Command, args []string) error {
			open := stdoutOf(cmd)
			if out != "" {
				open = newFile(out)
			}
			n, err := runRead(cmd.Context(), open, cmd.ErrOrStderr(), "export", args[0], &e, &r, true)
			if err == nil && out != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "exported %d messages to %s\n", n, out)
			}
			return err
		},
	}
	r.register(cmd.Flags(), 0)
	cmd.Flags().StringVar(&out, "out", "", "write to this new file instead of stdout")
	e.register(cmd.Flags(), outJSONL)
	return cmd
}

// newFile is the output of a new file at path (an existing one is not
// overwritten), removed again when the command fails.
func newFile(path string) output {
	return func() (io.Writer, func(bool) error, error) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, nil, usagef("--out: %v", err)
		}
		return f, func(failed bool) error {
			err := f.Close()
			if failed {
				os.Remove(path)
				return nil
			}
			if err != nil {
				return fmt.Errorf("--out %s: %w", path, err)
			}
			return nil
		}, nil
	}
}
