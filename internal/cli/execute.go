// Package cli is peeklock's command line: the commands, one file each
// (root.go, serve.go, connect.go, list.go, …), built with cobra and styled
// with fang; main.go at the repository root calls Execute.
package cli

import (
	"context"
	"io"
	"os"

	"charm.land/fang/v2"
)

// Execute runs the command line args and returns the exit status: 0, 1 for
// what failed at run time, 2 for what the user typed wrong (one line on
// stderr, before any screen or listener), 3 when a filter matched nothing.
// The commands read and write through streams, so a test can run them in
// process and read what they printed; they end when ctx does (main.go ends
// it on an interrupt or SIGTERM).
func Execute(ctx context.Context, args []string, streams Streams) int {
	root := newRootCommand(streams)
	root.SetArgs(normalizeArgs(root, args))
	writeHelpAtOnce(root)
	root.AddCommand(newManCommand()) // after: its help is fang's, as it was
	err := fang.Execute(ctx, root,
		fang.WithVersion(version()),
		fang.WithoutManpage(), // ours writes to the command's output (man.go)
		fang.WithErrorHandler(func(_ io.Writer, _ fang.Styles, _ error) {}),
	)
	return report(streams.Err, err)
}

// Streams are the standard input, output and error and the environment a
// command line runs with: the process's in main.go, buffers and a few
// variables in a test. Every command reads and writes through them (the
// dashboard reads its keys from the controlling terminal when In is a
// file that is not one, as Bubble Tea does).
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
	// Env holds the environment variables as os.Environ gives them
	// ("NAME=value"); nil is an empty environment.
	Env []string
}

// ProcessStreams returns the process's own standard streams and
// environment.
func ProcessStreams() Streams {
	return Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Env: os.Environ()}
}
