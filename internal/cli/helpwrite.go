package cli

import (
	"bytes"

	"github.com/spf13/cobra"
)

// writeHelpAtOnce makes every subcommand's help, when its output is not a
// terminal, render into memory and reach the output in one write. Rendered
// piece by piece (fang writes a few dozen times), a reader that stops at
// the first match (`peeklock serve --help | grep -q …`, as scripts probe
// for a flag) closes the pipe while help is still being written, and the
// process dies of SIGPIPE: under `set -o pipefail` the probe then fails
// although the text is there (3 times in 10 here). Written so, it also fits
// 80 columns (fitHelp). On a terminal help is
// written as before, styled for it. The root's help is fang's own (set as
// it runs) and is left as it is.
func writeHelpAtOnce(root *cobra.Command) {
	for _, c := range root.Commands() {
		c.SetHelpFunc(func(c *cobra.Command, args []string) {
			out := c.OutOrStdout()
			render := c.Root().HelpFunc() // fang's, by the time help is asked for
			if isTerminal(out) {
				render(c, args)
				return
			}
			var buf bytes.Buffer
			c.SetOut(&buf)
			render(c, args)
			c.SetOut(out)
			_, _ = out.Write([]byte(fitHelp(buf.String())))
		})
		writeHelpAtOnce(c)
	}
}
