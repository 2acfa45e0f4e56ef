package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// buildVersion is set at link time (-ldflags "-X main.buildVersion=v1.2.3").
var buildVersion string

// version returns the version of this build: buildVersion, else the module
// version and VCS revision the Go toolchain recorded.
func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	v, rev := "(devel)", ""
	if info, ok := debug.ReadBuildInfo(); ok {
		if info.Main.Version != "" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 7 {
				rev = s.Value[:7]
			}
		}
	}
	if rev != "" {
		v += " (" + rev + ")"
	}
	return v
}

// newVersionCommand returns `peeklock version`, which prints what
// --version prints.
func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version",
		Example: "  peeklock version\n  peeklock --version",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "peeklock version %s\n", version())
			return err
		},
	}
}

// decorateBuiltins gives cobra's own help and completion commands examples,
// as every command has.
func decorateBuiltins(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Example = "  peeklock help\n  peeklock help serve\n  peeklock serve --help"
		case "completion":
			c.Example = `  # bash, for this shell
  source <(peeklock completion bash)

  # zsh, for every new shell
  peeklock completion zsh > "${fpath[1]}/_peeklock"

  # fish
  peeklock completion fish > ~/.config/fish/completions/peeklock.fish

  # PowerShell
  peeklock completion powershell | Out-String | Invoke-Expression`
			examples := map[string]string{
				"bash":       "  source <(peeklock completion bash)",
				"zsh":        "  peeklock completion zsh > \"${fpath[1]}/_peeklock\"",
				"fish":       "  peeklock completion fish > ~/.config/fish/completions/peeklock.fish",
				"powershell": "  peeklock completion powershell | Out-String | Invoke-Expression",
			}
			for _, sub := range c.Commands() {
				sub.Example = examples[sub.Name()]
			}
			refuseUnknownShell(c)
		}
	}
}
