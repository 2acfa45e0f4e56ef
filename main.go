// Command peeklock is a terminal dashboard for live Azure Service Bus-style
// queue management, and a Service Bus-compatible broker it runs embedded.
//
// This file holds the wiring only: the commands are in files
// named for them (root.go, serve.go, connect.go, list.go, …), built with
// cobra and styled with fang.
package main

import (
	"context"
	"io"
	"os"
	"syscall"

	"charm.land/fang/v2"
)

func main() {
	os.Exit(execute(context.Background(), os.Args[1:]))
}

// execute runs the command line args and returns the exit status: 0, 1 for
// what failed at run time, 2 for what the user typed wrong (one line on
// stderr, before any screen or listener), 3 when a filter matched nothing.
func execute(ctx context.Context, args []string) int {
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
