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

	"github.com/peeklock/peeklock/internal/cli"
)

func main() {
	os.Exit(cli.Execute(context.Background(), os.Args[1:], cli.ProcessStreams()))
}
