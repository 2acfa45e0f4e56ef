package model

import (
	"github.com/peeklock/peeklock/internal/config"
	"github.com/peeklock/peeklock/keymap"
)

// ApplyConfig sets the options the config file gives (theme, refresh
// interval, export directory, lock count, key bindings) on opts; settings
// of the command line should be applied after it. The file is read and
// checked by config.Load.
func ApplyConfig(c config.File, opts *Options) error {
	if c.Theme != "" {
		opts.Theme = c.Theme
	}
	if c.Refresh.Duration > 0 {
		opts.Refresh = c.Refresh.Duration
	}
	if c.ExportDir != "" {
		opts.ExportDir = c.ExportDir
	}
	if c.LockCount > 0 {
		opts.LockCount = c.LockCount
	}
	if len(c.Keys) > 0 {
		if len(opts.KeyMap.Quit.Keys()) == 0 && len(opts.KeyMap.Up.Keys()) == 0 {
			opts.KeyMap = keymap.DefaultKeyMap()
		}
		if err := opts.KeyMap.Rebind(c.Keys); err != nil {
			return err
		}
	}
	return nil
}
