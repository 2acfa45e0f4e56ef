package model

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/peeklock/peeklock/internal/config"
	"github.com/peeklock/peeklock/keymap"
	"github.com/peeklock/peeklock/themes"
)

// The options the config file gives reach the dashboard's options, the
// keys rebound over the defaults.
func TestApplyConfig(t *testing.T) {
	cfg := config.File{Theme: "high-contrast", Refresh: config.Duration{Duration: 250 * time.Millisecond}, ExportDir: "/tmp/exports", LockCount: 5,
		Keys: map[string][]string{"complete": {"K"}, "dead_letter": {"D", "ctrl+d"}}}
	var opts Options
	if err := ApplyConfig(cfg, &opts); err != nil {
		t.Fatal(err)
	}
	if opts.Theme != "high-contrast" || opts.Refresh != 250*time.Millisecond || opts.ExportDir != "/tmp/exports" || opts.LockCount != 5 {
		t.Fatalf("%+v", opts)
	}
	if got := strings.Join(opts.KeyMap.DeadLetter.Keys(), ","); got != "D,ctrl+d" || opts.KeyMap.Quit.Keys()[0] != "q" {
		t.Fatalf("keys: dead-letter %s", got)
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
	if bad.bar.err == nil || !strings.Contains(bad.bar.err.Error(), `unknown theme "neon"`) {
		t.Fatalf("an unknown theme is not reported: %v", bad.bar.err)
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
