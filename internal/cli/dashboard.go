package cli

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/internal/config"
	"github.com/peeklock/peeklock/model"
	"github.com/peeklock/peeklock/themes"
)

// dashboardFlags are the flags every dashboard command shares.
type dashboardFlags struct {
	entity   string
	readOnly bool
	theme    string
	refresh  time.Duration
	uiConfig string
	// env is the command line's environment, where the default config
	// file is found.
	env environ
}

func (d *dashboardFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&d.entity, "entity", "", "select this entity at start")
	fs.BoolVar(&d.readOnly, "read-only", false, "disable every key that changes anything")
	fs.StringVar(&d.theme, "theme", "", "colour theme: dark, light, high-contrast, no-color (default: from the terminal background)")
	fs.DurationVar(&d.refresh, "refresh", 0, "refresh interval (default 1s, or the config file's)")
	fs.Lookup("refresh").DefValue = "" // the default is in the text
	d.registerUIConfig(fs, "dashboard config file (default $XDG_CONFIG_HOME/peeklock/config.toml)")
}

func (d *dashboardFlags) registerUIConfig(fs *pflag.FlagSet, usage string) {
	fs.StringVar(&d.uiConfig, "ui-config", "", usage)
}

// configPath returns the dashboard config file: --ui-config or the default.
func (d *dashboardFlags) configPath() string {
	if d.uiConfig != "" {
		return d.uiConfig
	}
	return config.DefaultPath(d.env.get)
}

// loadConfig reads the dashboard config file. A missing file at the default
// path is no config; any other problem is the user's to fix (exit 2), with
// the line and column of what is wrong.
func (d *dashboardFlags) loadConfig() (config.File, bool, error) {
	cfg, err := config.Load(d.configPath())
	switch {
	case err == nil:
		return cfg, true, nil
	case d.uiConfig == "" && errors.Is(err, fs.ErrNotExist):
		return config.File{}, false, nil
	}
	return config.File{}, false, usageError{err.Error()}
}

// options builds the dashboard's options: the config file first, then the
// command line over it. Everything is checked here, before any screen.
func (d *dashboardFlags) options() (model.Options, error) {
	var opts model.Options
	cfg, _, err := d.loadConfig()
	if err != nil {
		return opts, err
	}
	if err := model.ApplyConfig(cfg, &opts); err != nil {
		return opts, usageError{err.Error()}
	}
	opts.Entity = d.entity
	opts.ReadOnly = d.readOnly
	if d.theme != "" {
		if !strings.EqualFold(d.theme, "auto") {
			if _, err := themes.ByName(d.theme); err != nil {
				return opts, usagef("--theme: %v", err)
			}
		}
		opts.Theme = d.theme
	}
	if d.refresh < 0 || (d.refresh > 0 && d.refresh < 50*time.Millisecond) {
		return opts, usagef("--refresh %s: at least 50ms", d.refresh)
	}
	if d.refresh > 0 {
		opts.Refresh = d.refresh
	}
	return opts, nil
}

// terminal is what the dashboard of a command runs on: the command's input
// and output and the environment (TERM, NO_COLOR…).
type terminal struct {
	in  io.Reader
	out io.Writer
	env environ
}

// terminalOf is the terminal of cmd, whose environment is env.
func terminalOf(cmd *cobra.Command, env environ) terminal {
	return terminal{in: cmd.InOrStdin(), out: cmd.OutOrStdout(), env: env}
}

// options are the program options of the terminal. A file that is not a
// terminal (stdin a pipe) is left to Bubble Tea, which reads the keys from
// the controlling terminal then; an empty environment stays empty (Bubble
// Tea reads the process's for a nil one).
func (t terminal) options() []tea.ProgramOption {
	opts := []tea.ProgramOption{tea.WithOutput(t.out), tea.WithEnvironment(append([]string{}, t.env...))}
	if _, file := t.in.(*os.File); !file || isTerminal(t.in) {
		opts = append(opts, tea.WithInput(t.in))
	}
	return opts
}

// runDashboard runs the dashboard on c with opts, on term, until the user
// quits or ctx ends.
func runDashboard(ctx context.Context, term terminal, c broker.Client, opts model.Options) error {
	if opts.ReadOnly {
		c = broker.ReadOnly(c)
	}
	opts.StateDir = model.DefaultStateDir(term.env.get)           // the last entity, per endpoint (not for SSH sessions)
	opts.NoColor = opts.NoColor || term.env.get("NO_COLOR") != "" // this terminal's user; SSH sessions read their client's
	m := model.New(c, opts)
	defer m.Close()
	_, err := tea.NewProgram(m, append(term.options(), tea.WithContext(ctx))...).Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}
