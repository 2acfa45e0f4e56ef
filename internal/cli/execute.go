// Package cli is peeklock's command line: the commands, one file each
// (root.go, serve.go, connect.go, list.go, …), built with cobra and styled
// with fang; main.go at the repository root calls Execute.
package cli

import (
	"context"
	"io"
	"os"
	"syscall"

	"charm.land/fang/v2"
)

// Execute runs the command line args and returns the exit status: 0, 1 for
// what failed at run time, 2 for what the user typed wrong (one line on
// stderr, before any screen or listener), 3 when a filter matched nothing.
func Execute(ctx context.Context, args []string) int {
	root := newRootCommand()
	root.SetArgs(normalizeArgs(root, args))
	writeHelpAtOnce(root)
	// What a runbook command does on the store is the command line's; the
	// dashboard, the demo and serve's clients name themselves (actor.go).
	err := fang.Execute(asCLI(ctx), root,
		fang.WithVersion(version()),
		fang.WithErrorHandler(func(_ io.Writer, _ fang.Styles, _ error) {}),
		fang.WithNotifySignal(os.Interrupt, syscall.SIGTERM),
	)
	return report(os.Stderr, err)
}
