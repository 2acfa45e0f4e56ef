package model

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/peeklock/peeklock/keymap"
	"github.com/peeklock/peeklock/themes"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadConfig(t *testing.T) {
	p := writeConfig(t, `
theme = "high-contrast"
refresh = "250ms"
export_dir = "/tmp/exports"
lock_count = 5

[keys]
complete = ["K"]
dead_letter = ["D", "ctrl+d"]

[connections.prod]
connection_string = "Endpoint=sb://prod.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=s"
entity = "orders"
read_only = true
`)
	cfg, err := LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Theme != "high-contrast" || cfg.Refresh.Duration != 250*time.Millisecond || cfg.LockCount != 5 ||
		cfg.Connections["prod"].Entity != "orders" || !cfg.Connections["prod"].ReadOnly {
		t.Fatalf("%+v", cfg)
	}
	var opts Options
	if err := cfg.Apply(&opts); err != nil {
		t.Fatal(err)
	}
	if opts.Theme != "high-contrast" || opts.Refresh != 250*time.Millisecond || opts.ExportDir != "/tmp/exports" || opts.LockCount != 5 {
		t.Fatalf("%+v", opts)
	}
	if got := strings.Join(opts.KeyMap.DeadLetter.Keys(), ","); got != "D,ctrl+d" || opts.KeyMap.Quit.Keys()[0] != "q" {
		t.Fatalf("keys: dead-letter %s", got)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	cases := map[string]string{
		`theme = "neon"`:                  `unknown theme "neon"`,
		`refresh = "soon"`:                `time: invalid duration "soon"`,
		`refresh = "1ms"`:                 "refresh 1ms: must be at least 50ms",
		`colour = "red"`:                  "unknown setting(s): colour",
		"[keys]\nexplode = [\"x\"]":       `keymap: action "explode": unknown action`,
		"[keys]\ncomplete = []":           `keymap: action "complete": no keys given`,
		`theme = `:                        "toml:",
		"[connections.x]\nurl = \"amqp\"": "unknown setting(s): connections.x.url",
	}
	for text, want := range cases {
		_, err := LoadConfig(writeConfig(t, text))
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", text, err, want)
		}
	}
	_, err := LoadConfig(filepath.Join(t.TempDir(), "missing.toml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// TestLoadConfigErrorsHaveLineAndColumn locates each kind of error in the
// file: syntax, types, unknown settings, bad values and key conflicts.
func TestLoadConfigErrorsHaveLineAndColumn(t *testing.T) {
	cases := []struct{ text, want string }{
		{"refresh = \"1s\"\ntheme = ", `:2:8: unexpected EOF`},
		{"# c\n\n  lock_count = \"x\"", `:3:3: incompatible types`},
		{"refresh = \"1s\"\ntheme = \"neon\"", `:2:1: unknown theme "neon"`},
		{"# mine\n[keys]\n complete = [\"q\"]", `:3:2: keymap: action "complete": key "q" is also bound to "quit"`},
		{"theme = \"dark\"\ncolour = \"red\"", `:2:1: unknown setting(s): colour`},
		{"[connections.x]\nurl = \"amqp\"", `:2:1: unknown setting(s): connections.x.url`},
		{"refresh = \"soon\"", `:1:12: time: invalid duration "soon"`},
	}
	for _, tc := range cases {
		path := writeConfig(t, tc.text)
		_, err := LoadConfig(path)
		if err == nil || !strings.HasPrefix(err.Error(), "config "+path+tc.want) {
			t.Errorf("%q: got %v, want %q", tc.text, err, "config "+path+tc.want)
		}
	}
}

func TestDefaultConfigPath(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/x/cfg")
	if got := DefaultConfigPath(); got != "/x/cfg/peeklock/config.toml" {
		t.Fatalf("got %s", got)
	}
}

func TestRebindFromConfigDrivesKeys(t *testing.T) {
	clock, c := fixture(t, 1)
	km := keymap.DefaultKeyMap()
	if err := km.Rebind(map[string][]string{"complete": {"K"}}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, c, clock, Options{KeyMap: km}, 80, 24)
	h.key("l")
	h.key("c") // no longer bound
	if len(h.m.held) != 1 {
		t.Fatal("c still completes")
	}
	h.key("K")
	h.wantStatus("completed: sequence number 1")
}

func TestThemeFollowsBackground(t *testing.T) {
	clock, c := fixture(t, 0)
	h := newHarness(t, c, clock, Options{Theme: "auto"}, 80, 24)
	h.update(tea.BackgroundColorMsg{Color: lipgloss.Color("#FFFFFF")})
	if h.m.theme.Name != themes.NameLight {
		t.Fatalf("light background: %s", h.m.theme.Name)
	}
	h.update(tea.BackgroundColorMsg{Color: lipgloss.Color("#000000")})
	if h.m.theme.Name != themes.NameDark {
		t.Fatalf("dark background: %s", h.m.theme.Name)
	}
	fixed := newHarness(t, c, clock, Options{Theme: "light"}, 80, 24)
	fixed.update(tea.BackgroundColorMsg{Color: lipgloss.Color("#000000")})
	if fixed.m.theme.Name != themes.NameLight {
		t.Fatal("a configured theme changed with the background")
	}
	bad := New(c, Options{Theme: "neon"})
	if bad.lastErr == nil || !strings.Contains(bad.lastErr.Error(), `unknown theme "neon"`) {
		t.Fatalf("an unknown theme is not reported: %v", bad.lastErr)
	}
}

// NoColor turns colours off over any theme; the process's NO_COLOR does
// not (the caller decides whose environment counts: over SSH, the
// client's).
func TestNoColorOption(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	clock, c := fixture(t, 1)
	h := newHarness(t, c, clock, Options{Theme: "dark"}, 80, 24)
	if h.m.theme.Name != themes.NameDark {
		t.Fatalf("the process's NO_COLOR reached the model: theme %s", h.m.theme.Name)
	}
	h = newHarness(t, c, clock, Options{Theme: "dark", NoColor: true}, 80, 24)
	if h.m.theme.Name != themes.NameNoColor {
		t.Fatalf("theme %s", h.m.theme.Name)
	}
	out := h.m.render()
	if strings.Contains(out, "38;2;") || strings.Contains(out, "48;2;") {
		t.Fatal("colours under NoColor")
	}
}
