package cli

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// completionShells are the shells `peeklock completion` writes scripts for.
var completionShells = []string{"bash", "zsh", "fish", "powershell"}

// refuseUnknownShell makes `peeklock completion SHELL` for a shell it has
// no script for a usage error (exit 2) instead of its help.
func refuseUnknownShell(c *cobra.Command) {
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usagef("completion: no script for the shell %q; the shells are %s", args[0], joinList(completionShells, "and"))
		}
		return cmd.Help()
	}
}

// completeEntities offers the entity names of the endpoint a command's
// flags name (--data, --connection, --namespace or
// SERVICEBUS_CONNECTION_STRING of env) for its ENTITY argument; nothing
// when the endpoint cannot be reached within a few seconds.
func completeEntities(env environ) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		fs := cmd.Flags()
		str := func(name string) string {
			if f := fs.Lookup(name); f != nil {
				return f.Value.String()
			}
			return ""
		}
		e := endpointFlags{env: env, data: str("data"), connection: str("connection"), namespace: str("namespace"),
			adminURL: str("admin-url"), uiConfig: str("ui-config"), output: outTable}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, err := e.open(ctx, cmd.Name(), "", false)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer c.Close()
		list, err := c.Entities(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, ent := range list {
			if strings.HasPrefix(strings.ToLower(ent.Path), strings.ToLower(toComplete)) {
				out = append(out, ent.Path)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
