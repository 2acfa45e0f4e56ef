package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// normalizeArgs lets the single-dash flags of the standard flag package
// (-entity q, -no-demo, -amqp=:5672), which scripts written for earlier
// versions use, keep working: an argument "-name" or "-name=value" whose
// name is a long flag of some command becomes "--name…". Values of flags
// that take one, and everything after "--", are left alone.
func normalizeArgs(root *cobra.Command, args []string) []string {
	takesValue := map[string]bool{"help": false, "version": false}
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.LocalNonPersistentFlags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) { takesValue[f.Name] = takesValue[f.Name] || f.NoOptDefVal == "" })
		}
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(root)
	out := make([]string, 0, len(args))
	skipValue := false
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if skipValue {
			skipValue = false
			out = append(out, a)
			continue
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			name, _, hasValue := strings.Cut(a[1:], "=")
			if tv, known := takesValue[name]; known && len(name) > 1 {
				a = "-" + a
				skipValue = tv && !hasValue
			}
		} else if strings.HasPrefix(a, "--") {
			name, _, hasValue := strings.Cut(a[2:], "=")
			skipValue = takesValue[name] && !hasValue
		}
		out = append(out, a)
	}
	return out
}
