package ui

import (
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/keymap"
)

func TestCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1.0k", 1234: "1.2k", 12_345: "12k", 1_000_000: "1.0M", 25_000_000: "25M", -5: "-5"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestDurations(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := map[time.Duration]string{500 * time.Millisecond: "0s", 59 * time.Second: "59s", 12 * time.Minute: "12m", 3 * time.Hour: "3h", 72 * time.Hour: "3d"}
	for d, want := range cases {
		if got := Age(now, now.Add(-d)); got != want {
			t.Errorf("Age(%s) = %q, want %q", d, got, want)
		}
	}
	if got := Age(now, time.Time{}); got != "-" {
		t.Errorf("Age(zero) = %q", got)
	}
	if got := Age(now, now.Add(time.Minute)); got != "in 1m" {
		t.Errorf("future age %q", got)
	}
	for d, want := range map[time.Duration]string{12300 * time.Millisecond: "12s", 9300 * time.Millisecond: "9.3s", 65 * time.Second: "1m05s", -time.Second: "0.0s"} {
		if got := Remaining(d); got != want {
			t.Errorf("Remaining(%s) = %q, want %q", d, got, want)
		}
	}
	for n, want := range map[int64]string{512: "512B", 1536: "1.5K", 20 * 1024: "20K", 3 << 20: "3.0M"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestDueCell pins the Scheduled pane's Due column: whole seconds with
// their unit at every length, "due" once the time has come.
func TestDueCell(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for d, want := range map[time.Duration]string{
		5900 * time.Millisecond: "in 5s",
		time.Second:             "in 1s",
		14 * time.Second:        "in 14s",
		65 * time.Second:        "in 1m05s",
		3 * time.Hour:           "in 3h",
		0:                       "due",
	} {
		m := &broker.Message{ScheduledEnqueueTime: now.Add(d)}
		if got := cellText(now, m, colDue); got != want {
			t.Errorf("Due %s ahead = %q, want %q", d, got, want)
		}
	}
	if got := cellText(now, &broker.Message{}, colDue); got != "-" {
		t.Errorf("Due of an unscheduled message = %q, want -", got)
	}
}

func TestCountdownEmptiesAndChangesColour(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	total := 30 * time.Second
	cases := []struct {
		left  time.Duration
		plain string
		style string
	}{
		{30 * time.Second, "██████████   30s", "ok"},
		{15 * time.Second, "█████░░░░░   15s", "warn"},
		{3 * time.Second, "█░░░░░░░░░  3.0s", "low"},
	}
	for _, c := range cases {
		got := Countdown(testStyles, now, now.Add(c.left), total, "", 16)
		if p := ansi.Strip(got); p != c.plain {
			t.Errorf("%s left: %q, want %q", c.left, p, c.plain)
		}
		want := map[string]string{"ok": testStyles.CountdownOK.Render("█"), "warn": testStyles.CountdownWarn.Render("█"), "low": testStyles.CountdownLow.Render("█")}[c.style]
		if !strings.HasPrefix(got, want[:len(want)-4]) {
			t.Errorf("%s left: wrong colour in %q", c.left, got)
		}
	}
	// An expired lock flashes: bright and plain phases alternate every 400 ms.
	on := Countdown(testStyles, now, now.Add(-time.Second), total, "", 16)
	off := Countdown(testStyles, now.Add(400*time.Millisecond), now.Add(-time.Second), total, "", 16)
	if ansi.Strip(on) != " EXPIRED        " || on == off {
		t.Fatalf("expired lock does not flash: %q / %q", on, off)
	}
	if got := ansi.Strip(Countdown(testStyles, now, now.Add(time.Hour), total, FlashLost, 10)); got != " LOST     " {
		t.Fatalf("lost: %q", got)
	}
}

func TestSparkline(t *testing.T) {
	if got := Sparkline([]int64{0, 1, 2, 4, 8}, 5); got != "▁▂▃▅█" {
		t.Fatalf("got %q", got)
	}
	if got := Sparkline([]int64{5}, 3); got != "  █" {
		t.Fatalf("short history: %q", got)
	}
	if got := Sparkline([]int64{1, 2, 3, 4}, 2); got != "▇█" {
		t.Fatalf("keeps the newest: %q", got)
	}
}

func TestLayout(t *testing.T) {
	few := &broker.Counts{Active: 7, Locked: 2, Deferred: 1, Scheduled: 2, DeadLettered: 2}
	cases := []struct {
		w, h, focus int
		counts      *broker.Counts
		narrow      bool
		panes       []int
	}{
		{80, 24, 0, nil, true, []int{0}},
		{120, 40, 3, nil, true, []int{3}},
		{80, 24, 0, &broker.Counts{Active: 50}, true, []int{0}},                      // Active needs every line
		{80, 24, 0, &broker.Counts{Active: 5}, false, []int{0, 1, 2, 3, 4}},          // room for the empty panes' titles
		{60, 20, 0, &broker.Counts{Active: 50, DeadLettered: 3}, false, []int{0, 4}}, // the DLQ below
		{60, 20, 4, &broker.Counts{Active: 50, DeadLettered: 3}, false, []int{0, 4}}, // three rows are all the DLQ needs
		{80, 24, 0, few, false, []int{0, 4}},
		{120, 40, 0, few, false, []int{0, 1, 2, 3, 4}},
		{120, 40, 4, few, false, []int{0, 1, 2, 3, 4}},
		{200, 60, 2, few, false, []int{0, 1, 2, 3, 4}},
	}
	for _, c := range cases {
		l := NewLayoutWith(c.w, c.h, c.focus, LayoutOptions{Counts: c.counts})
		var got []int
		heights := map[int]int{}
		for _, s := range l.Panes {
			got = append(got, s.Index)
			heights[s.Rect.X] += s.Rect.H
		}
		if l.Narrow != c.narrow || !equalInts(got, c.panes) {
			t.Errorf("%dx%d focus %d %+v: narrow %v panes %v, want %v %v", c.w, c.h, c.focus, c.counts, l.Narrow, got, c.narrow, c.panes)
		}
		if l.Status.Y != c.h-1 || l.HelpLine.Y != c.h-2 {
			t.Errorf("%dx%d: status at %d", c.w, c.h, l.Status.Y)
		}
		// Each column of panes fills the main area's height.
		for x, hh := range heights {
			if hh != l.Main.H {
				t.Errorf("%dx%d focus %d: the column at %d is %d high, want %d", c.w, c.h, c.focus, x, hh, l.Main.H)
			}
		}
		if f, ok := l.Slot(c.focus); !ok || f.Rows() < min(minPaneRows, l.Main.H-PaneChrome) {
			t.Errorf("%dx%d focus %d: the focused pane has %d rows", c.w, c.h, c.focus, f.Rows())
		}
	}
	// Zoomed: the focused pane takes everything above the help line.
	l := NewLayoutWith(60, 20, 4, LayoutOptions{Zoom: true, Counts: few})
	if !l.Zoomed || l.Sidebar.W != 0 || l.Tabs.H != 0 || len(l.Panes) != 1 || l.Panes[0].Rect != (Rect{0, 0, 60, 18}) {
		t.Errorf("zoomed: %+v", l)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTabAt(t *testing.T) {
	c := &Common{Styles: testStyles}
	counts := broker.Counts{Active: 12}
	line := ansi.Strip(Tabs(c, counts, 0, 120))
	for i, label := range []string{"1 Active 12", "2 Locked 0", "3 Deferred 0", "4 Scheduled 0", "5 Dead-lettered 0"} {
		x := strings.Index(line, label)
		if x < 0 {
			t.Fatalf("%q not in %q", label, line)
		}
		if got := TabAt(counts, 120, x); got != i {
			t.Errorf("TabAt(%d) = %d, want %d", x, got, i)
		}
	}
	if got := TabAt(counts, 120, 119); got != -1 {
		t.Errorf("past the tabs: %d", got)
	}
}

func TestStatusBarShowsErrorWithTrackingID(t *testing.T) {
	c := &Common{Styles: testStyles}
	s := Status{Endpoint: "sb://ns\x1b[2J", Conn: ConnError, Refresh: time.Second, Paused: true, ReadOnly: true,
		Err: "server busy: try later", TrackingID: "tid-42"}
	got := ansi.Strip(StatusBar(c, s, 100))
	want := " ● error PAUSED ⟳ 1s READ-ONLY  ✗ server busy: try later (TrackingId: tid-42)           sb://ns␛[2J "
	if got != want || ansi.StringWidth(got) != 100 {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	// A narrow bar drops the endpoint first, then cuts the message.
	got = ansi.Strip(StatusBar(c, s, 60))
	if want := " ● error PAUSED ⟳ 1s READ-ONLY  ✗ server busy: try later (T…"; got != want || ansi.StringWidth(got) != 60 {
		t.Fatalf("narrow: %q", got)
	}
}

func TestPaneColumnsFitWidth(t *testing.T) {
	for _, cat := range broker.Categories {
		for _, w := range []int{20, 33, 40, 54, 58, 76, 150} {
			if w < 33 && cat != broker.CategoryDeadLettered {
				continue // the other panes are cut below 33 cells
			}
			for _, reasonW := range []int{0, 16, 24, 40} {
				cols := columns(cat, true, w, reasonW)
				used := len(cols) - 1
				for _, c := range cols {
					used += c.w
				}
				if used != w {
					t.Errorf("%s at %d (reason %d): columns use %d cells", cat, w, reasonW, used)
				}
			}
		}
	}
}

// TestDeadLetterReasonIsReadWhole checks that the Reason column of the
// Dead-lettered pane is as wide as the widest reason on screen, at the
// widths of a phone (58 cells) and of the 80-column layout, and that the
// delivery count stays.
func TestDeadLetterReasonIsReadWhole(t *testing.T) {
	for _, w := range []int{53, 58, 76} {
		cols := columns(broker.CategoryDeadLettered, false, w, len("MaxDeliveryCountExceeded"))
		kinds := map[colKind]int{}
		for _, c := range cols {
			kinds[c.kind] = c.w
		}
		if kinds[colReason] != len("MaxDeliveryCountExceeded") {
			t.Errorf("at %d the reason gets %d cells: %+v", w, kinds[colReason], cols)
		}
		if _, ok := kinds[colDC]; !ok {
			t.Errorf("at %d the delivery count is gone: %+v", w, cols)
		}
	}
}

func TestHelpShowsWhyKeysAreDisabled(t *testing.T) {
	km := keymap.DefaultKeyMap()
	c := &Common{Styles: testStyles, KeyMap: &km}
	why := func(b *key.Binding) string {
		if b == &km.Complete {
			return "read-only mode"
		}
		return ""
	}
	got := ansi.Strip(strings.Join(HelpLines(c, why, 80), "\n"))
	if !strings.Contains(got, "c            complete — read-only mode") || !strings.Contains(got, "a            abandon\n") {
		t.Fatalf("help:\n%s", got)
	}
}

// TestShortHelpMeasuresCells: a description in wide characters (two cells
// each) counts by cells, so the items shown fit the width and the next one
// is left out instead of cut.
func TestShortHelpMeasuresCells(t *testing.T) {
	c := &Common{Styles: testStyles}
	bindings := []key.Binding{
		key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "完了する")), // "c " + 8 cells = 10
		key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "放棄")),   // " · " + "a " + 4 cells = 9
	}
	for w, want := range map[int]string{10: "c 完了する", 18: "c 完了する", 19: "c 完了する · a 放棄"} {
		got := strings.TrimRight(ansi.Strip(ShortHelp(c, bindings, w)), " ")
		if got != want {
			t.Errorf("width %d: %q, want %q", w, got, want)
		}
		if n := ansi.StringWidth(ShortHelp(c, bindings, w)); n > w {
			t.Errorf("width %d: %d cells", w, n)
		}
	}
}
