// Command peeklock is a terminal dashboard for live Azure Service Bus-style
// queue management, and a Service Bus-compatible broker it runs embedded.
//
// This file holds the wiring only: the commands are in internal/cli, in
// files named for them (root.go, serve.go, connect.go, list.go, …), built
// with cobra and styled with fang.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/peeklock/peeklock/internal/cli"
)

func main() {
	// An interrupt or SIGTERM ends the command's context: serve shuts
	// down, tail and list --watch stop, the dashboard quits.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	status := cli.Execute(ctx, os.Args[1:], cli.ProcessStreams())
	stop()
	os.Exit(status)
}
