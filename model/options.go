package model

import (
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/peeklock/peeklock/keymap"
)

// Options configure a Model. The zero value is usable.
type Options struct {
	// Entity selects that entity at start ("" selects the first).
	Entity string
	// ReadOnly disables every key that changes anything; the client is also
	// wrapped with broker.ReadOnly so that nothing can slip through.
	ReadOnly bool
	// Refresh is the polling interval (default 1 s).
	Refresh time.Duration
	// Theme is a theme name of package themes; "" or "auto" picks dark or
	// light from the terminal's background.
	Theme string
	// NoColor turns colours off. The caller sets it from NO_COLOR in the
	// user's environment: the process's for the local dashboard, the SSH
	// client's for an SSH session (New reads no environment).
	NoColor bool
	// KeyMap is the key map; a zero KeyMap means keymap.DefaultKeyMap().
	KeyMap keymap.KeyMap
	// Clock is the clock of ticks, countdowns and ages (nil: the real one).
	Clock clockwork.Clock
	// ExportDir is where x writes JSON-lines files ("" : the current
	// directory) when RemoteExport is nil: the dashboard runs on the user's
	// machine.
	ExportDir string
	// RemoteExport, when not nil, is how x exports for a dashboard served
	// over SSH, where the files would land on the server: see RemoteExport.
	RemoteExport *RemoteExport
	// LockCount is how many messages l locks at once (default 1).
	LockCount int
	// Concurrency bounds the broker calls of bulk work (default 8).
	Concurrency int
	// Timeout bounds each broker call (default 15 s).
	Timeout time.Duration
	// AutoRenewFor is how long auto-renew keeps a lock (default 10 min).
	AutoRenewFor time.Duration
	// FilterScan is the most messages a filtered pane scans per refresh
	// (default 5000).
	FilterScan int
	// SearchScan is the most messages the search for a reply's request
	// browses in all (default 10000).
	SearchScan int
	// StateDir is where the dashboard remembers, per endpoint, the entity
	// it showed last, and shows it again at start when Entity is ""
	// (DefaultStateDir gives the usual one); "" remembers nothing.
	StateDir string
}

// RemoteExport is the export policy of a dashboard served over SSH. An
// export of at most ClipboardMax bytes (JSON lines) goes to the user's
// clipboard through OSC 52, which the SSH client's terminal sets on the
// user's machine. A larger one is written as a file into Dir on the server,
// when Dir is set (operator keys) and it is at most FileMax bytes; else it is
// refused, saying why. Every export, refused ones included, is reported to
// Audit.
type RemoteExport struct {
	// ClipboardMax is the most bytes sent through OSC 52 (0:
	// DefaultClipboardMax). Terminals cap what they accept (often near
	// 100 KB of base64), so larger exports are not sent that way.
	ClipboardMax int
	// Dir is where files are written ("": no files; NoFiles says why).
	Dir     string
	NoFiles string
	// FileMax is the most bytes of one file (0: DefaultExportFileMax).
	FileMax int64
	// Audit, when not nil, is told each export: of which entity, where it
	// went ("clipboard", the file's path, or "" when refused), how many
	// messages and bytes, and the error of a refused or failed one.
	Audit func(entity, to string, messages int, bytes int64, err error)
}

// Defaults of RemoteExport.
const (
	DefaultClipboardMax  = 64 << 10
	DefaultExportFileMax = 64 << 20
)

// Defaults.
const (
	DefaultRefresh      = time.Second
	DefaultConcurrency  = 8
	DefaultTimeout      = 15 * time.Second
	DefaultAutoRenewFor = 10 * time.Minute
	DefaultFilterScan   = 5000
	DefaultSearchScan   = 10000
	// FlashFor is how long a row flashes after its lock expired or was lost.
	FlashFor = 3 * time.Second
	// infoFor is how long a passing message stays in the status bar; the
	// message log keeps it.
	infoFor = 10 * time.Second
	// frameEvery is the animation frame of countdowns and flashes.
	frameEvery = 200 * time.Millisecond
	// eventDebounce is the least time between two refreshes caused by
	// events.
	eventDebounce = 100 * time.Millisecond
	// historyBucket and historyLen: the sparkline keeps one depth sample
	// per bucket, over historyLen buckets (five minutes).
	historyBucket = 5 * time.Second
	historyLen    = 60
)

func (o Options) withDefaults() Options {
	if o.Refresh <= 0 {
		o.Refresh = DefaultRefresh
	}
	if len(o.KeyMap.Quit.Keys()) == 0 && len(o.KeyMap.Up.Keys()) == 0 {
		o.KeyMap = keymap.DefaultKeyMap()
	}
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	if o.LockCount <= 0 {
		o.LockCount = 1
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.AutoRenewFor <= 0 {
		o.AutoRenewFor = DefaultAutoRenewFor
	}
	if o.FilterScan <= 0 {
		o.FilterScan = DefaultFilterScan
	}
	if o.SearchScan <= 0 {
		o.SearchScan = DefaultSearchScan
	}
	return o
}
