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
// The commands read and write through streams, so a test can run them in
// process and read what they printed.
func Execute(ctx context.Context, args []string, streams Streams) int {
	root := newRootCommand()
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.Err)
	root.SetArgs(normalizeArgs(root, args))
	writeHelpAtOnce(root)
	err := fang.Execute(ctx, root,
		fang.WithVersion(version()),
		fang.WithErrorHandler(func(_ io.Writer, _ fang.Styles, _ error) {}),
		fang.WithNotifySignal(os.Interrupt, syscall.SIGTERM),
	)
	return report(streams.Err, err)
}

// Streams are the standard input, output and error a command line runs
// with: the process's in main.go, buffers in a test.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
}

// ProcessStreams returns the process's own standard streams.
func ProcessStreams() Streams {
	return Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}
}
