package model

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/jonboulle/clockwork"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// infoFixture is an engine with a queue with non-default settings, user
// metadata and traffic, a topic with two subscriptions, one of them with
// rules of every kind.
func infoFixture(t *testing.T) (*clockwork.FakeClock, broker.Client) {
	t.Helper()
	clock := clockwork.NewFakeClockAt(t0)
	eng := newEngine(t, clock,
		broker.Entity{Path: "orders", UserMetadata: "owner: team-orders\npager: +1 555 0100",
			Settings: broker.EntitySettings{LockDuration: time.Minute, MaxDeliveryCount: 3, DefaultMessageTimeToLive: 14 * 24 * time.Hour,
				DeadLetteringOnMessageExpiration: true, RequiresDuplicateDetection: true, ForwardDeadLetteredMessagesTo: "poison",
				AutoDeleteOnIdle: 7 * 24 * time.Hour},
			AuthorizationRules: []broker.AuthorizationRule{{KeyName: "orders-app", PrimaryKey: "secret-primary", SecondaryKey: "secret-secondary",
				Rights: broker.RightSend | broker.RightListen, CreatedTime: t0}}},
		broker.Entity{Path: "poison", Settings: broker.EntitySettings{Status: broker.StatusReceiveDisabled}},
		broker.Entity{Path: "events", Kind: broker.KindTopic},
		broker.Entity{Path: "events/Subscriptions/audit", Kind: broker.KindSubscription},
		broker.Entity{Path: "events/Subscriptions/billing", Kind: broker.KindSubscription, Rules: []broker.Rule{
			{Name: "red", SQL: "color = @color AND quantity > 5", Parameters: map[string]any{"@color": "red"},
				Action: "SET priority = @level", ActionParameters: map[string]any{"@level": int64(3)}},
			{Name: "cart", Filter: &broker.CorrelationFilter{CorrelationID: "cart-7", Subject: "OrderPlaced",
				Properties: map[string]any{"tenant": "acme", "tier": int64(2)}}},
			{Name: "never", SQL: "1=0"},
		}},
	)
	clock.Advance(90 * time.Second)
	for i := 0; i < 3; i++ {
		send(t, eng, "orders", msg(fmt.Sprintf("o-%d", i), "order"))
	}
	x := msg("e-1", "OrderPlaced")
	x.CorrelationID = "cart-7"
	send(t, eng, "events", x)
	clock.Advance(2 * time.Hour)
	return clock, eng
}

// infoText returns every line of the open information view, unstyled and
// without trailing spaces.
func infoText(h *harness) string {
	h.t.Helper()
	if h.m.entInfo == nil {
		h.t.Fatal("the entity info view is not open")
	}
	var out []string
	for _, l := range h.m.entInfo.lines {
		out = append(out, strings.TrimRight(ansi.Strip(l), " "))
	}
	return strings.Join(out, "\n")
}

// wantLines fails unless text holds every line of want, whole.
func wantLines(t *testing.T, text string, want ...string) {
	t.Helper()
	lines := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		lines[l] = true
	}
	for _, w := range want {
		if !lines[w] {
			t.Errorf("no line %q in:\n%s", w, text)
		}
	}
}

// i opens the selected queue's settings with units and defaults, counts,
// times and user metadata; the other keys explain that they do not work
// here; esc goes back.
func TestInfoQueue(t *testing.T) {
	clock, c := infoFixture(t)
	h := newHarness(t, c, clock, Options{}, 80, 24)
	h.key("i")
	wantLines(t, infoText(h),
		"Queue orders",
		"3 active · 0 locked · 0 deferred · 0 scheduled",
		"Lock duration            1m (default)",
		"Max delivery count       3 deliveries",
		"Default message TTL      14d",
		"Dead-letter on expiry    on",
		"Duplicate detection      on, window 10m (default)",
		"Requires session         off (default)",
		"Max size                 1024 MB (default)",
		"Max message size         256 KB (default)",
		"Forward to               none (default)",
		"Forward dead letters to  poison",
		"Status                   Active (default)",
		"Auto-delete              after 7d idle",
		"Partitioning             off (default)",
		"Batched operations       on (default)",
		"orders-app: Send, Listen",
		"  two keys · created 2025-03-01 12:00:00Z",
		"Created                  2025-03-01 12:00:00Z (2h ago)",
		"Last accessed            2025-03-01 12:01:30Z (2h ago)",
		"owner: team-orders",
		"pager: +1 555 0100",
	)
	if !strings.Contains(h.screen(), "orders › info") || !strings.Contains(h.screen(), "esc back / cancel") {
		t.Fatalf("no title:\n%s", h.screen())
	}
	// The keys of authorization rules are never shown; a status that
	// refuses operations is marked in the entity list.
	if text := infoText(h); strings.Contains(text, "secret") {
		t.Fatalf("a key is shown:\n%s", text)
	}
	if !regexp.MustCompile(`(?m)^poison +!rx +0 `).MatchString(h.screen()) {
		t.Fatalf("no status marker in the entity list:\n%s", h.screen())
	}
	h.key("c")
	h.wantErr("complete is disabled: not in the entity info view (esc goes back)")
	h.key("enter")
	h.wantErr("details is disabled: not in the entity info view (esc goes back)")
	if h.m.detail != nil {
		t.Fatal("enter opened the detail view under the info view")
	}
	h.key("esc")
	if h.m.entInfo != nil || !strings.Contains(h.screen(), "o-0") {
		t.Fatalf("esc did not go back to the panes:\n%s", h.screen())
	}
	// i toggles too, and the view opens over the detail view and returns to it.
	h.keys("enter", "i")
	if h.m.entInfo == nil || h.m.detail == nil {
		t.Fatal("i over the detail view")
	}
	h.key("i")
	if h.m.entInfo != nil || h.m.detail == nil || !strings.Contains(h.screen(), "Broker properties") {
		t.Fatalf("i did not close the info view back to the detail view:\n%s", h.screen())
	}
}

// The view scrolls like the detail view: down, G, g, pgdown, pgup; the
// frame shows the lines from the top.
func TestInfoScrolls(t *testing.T) {
	clock, c := infoFixture(t)
	h := newHarness(t, c, clock, Options{Entity: "events/Subscriptions/billing"}, 80, 16)
	h.key("i")
	n := len(h.m.entInfo.lines)
	page := h.m.layout().Main.H - 1
	maxTop := n - page
	if maxTop <= page {
		t.Fatalf("%d lines: the fixture must be longer than two pages of %d", n, page)
	}
	for _, step := range []struct {
		key string
		top int
	}{{"down", 1}, {"j", 2}, {"up", 1}, {"G", maxTop}, {"down", maxTop}, {"g", 0}, {"up", 0},
		{"pgdown", page}, {"pgdown", min(2*page, maxTop)}, {"pgup", min(2*page, maxTop) - page}} {
		h.key(step.key)
		if h.m.entInfo.top != step.top {
			t.Fatalf("after %s: top %d, want %d", step.key, h.m.entInfo.top, step.top)
		}
	}
	h.key("G")
	lines := strings.Split(h.screen(), "\n")
	l := h.m.layout()
	if got := strings.TrimSpace(ansi.Cut(lines[l.Main.Y+page], l.Main.X, l.Width)); got != "action  none" {
		t.Fatalf("the last line on screen at the bottom is %q, want the last rule's action", got)
	}
}

// A subscription shows its rules: SQL filter and action, correlation
// filter with fields and properties, FalseFilter; a subscription created
// without rules lists the $Default TrueFilter, and one whose rules were all
// removed says that it gets nothing; a topic lists its subscriptions with
// their counts; ] moves the view to the next entity.
func TestInfoRulesAndSubscriptions(t *testing.T) {
	clock, c := infoFixture(t)
	h := newHarness(t, c, clock, Options{Entity: "events/Subscriptions/billing"}, 100, 30)
	h.key("i")
	wantLines(t, infoText(h),
		"Subscription events/Subscriptions/billing",
		"▸ red  created 2025-03-01 12:00:00Z",
		"  filter  SQL: color = @color AND quantity > 5",
		"          parameter @color = red (string)",
		"  action  SQL: SET priority = @level",
		"          parameter @level = 3 (int64)",
		"▸ cart  created 2025-03-01 12:00:00Z",
		"  filter  correlation: every field below must equal",
		"          CorrelationId = cart-7",
		"          Subject = OrderPlaced",
		"          property tenant = acme (string)",
		"          property tier = 2 (int64)",
		"  action  none",
		"▸ never  created 2025-03-01 12:00:00Z",
		"  filter  FalseFilter (1=0): matches no message",
	)
	if !strings.Contains(infoText(h), "── Rules (3) ───") {
		t.Error("no Rules (3) section")
	}
	if strings.Contains(infoText(h), "Duplicate detection") || strings.Contains(infoText(h), "Max size") {
		t.Error("a subscription shows settings it does not have")
	}
	h.key("[")
	if h.m.entity != "events/Subscriptions/audit" || h.m.entInfo == nil {
		t.Fatalf("[ moved to %q, info %v", h.m.entity, h.m.entInfo)
	}
	wantLines(t, infoText(h), "Subscription events/Subscriptions/audit", "── Rules (1) "+strings.Repeat("─", 75-len("Rules (1)")-4),
		"▸ $Default  created 2025-03-01 12:00:00Z",
		"  filter  TrueFilter (1=1): matches every message")

	h2 := newHarness(t, c, clock, Options{Entity: "events"}, 100, 30)
	h2.key("i")
	wantLines(t, infoText(h2),
		"Topic events",
		"size 0B · 2 subscription(s)",
		"Default message TTL      never expires (default)",
		"Duplicate detection      off (default)",
		fmt.Sprintf("%-45s%6s%6s%6s%6s%6s", "name", "A", "L", "D", "S", "X"),
		fmt.Sprintf("%-45s%6d%6d%6d%6d%6d", "audit", 1, 0, 0, 0, 0),
		fmt.Sprintf("%-45s%6d%6d%6d%6d%6d", "billing", 0, 0, 0, 0, 0),
	)

	if err := c.(*engine.Engine).RemoveRule(context.Background(), "events/Subscriptions/audit", "$default"); err != nil {
		t.Fatal(err)
	}
	h3 := newHarness(t, c, clock, Options{Entity: "events/Subscriptions/audit"}, 100, 30)
	h3.key("i")
	wantLines(t, infoText(h3), "── Rules (0) "+strings.Repeat("─", 75-len("Rules (0)")-4),
		"none: no message reaches this subscription")
}

// Escape sequences in user metadata, rule names, SQL expressions and
// correlation values never reach the terminal: they are drawn as visible
// text.
func TestInfoSanitizes(t *testing.T) {
	clock := clockwork.NewFakeClockAt(t0)
	c := newEngine(t, clock,
		broker.Entity{Path: "orders", UserMetadata: "owner \x1b]52;c;ZXZpbA==\x07 \x1b[2J\u202e"},
		broker.Entity{Path: "events", Kind: broker.KindTopic},
		broker.Entity{Path: "events/Subscriptions/s", Kind: broker.KindSubscription, Rules: []broker.Rule{
			{Name: "sql", SQL: "note = '\x1b]8;;http://evil\x07'", Action: "SET x = '\x1b[31m'"},
			{Name: "corr", Filter: &broker.CorrelationFilter{Subject: "\x1b[1A", Properties: map[string]any{"k\x1b[K": "\x1b[5m"}}},
		}},
	)
	h := newHarness(t, c, clock, Options{}, 80, 24)
	for _, entity := range []string{"orders", "events/Subscriptions/s"} {
		h.m.switchEntity(entity)
		h.key("i")
		text := strings.Join(h.m.entInfo.lines, "\n")
		frame := h.m.render()
		for _, bad := range []string{"\x1b]", "\x07", "\x1b[2J", "\x1b[31m", "\x1b[1A", "\x1b[K", "\x1b[5m", "\u202e"} {
			if strings.Contains(text, bad) || strings.Contains(frame, bad) {
				t.Errorf("%s: %q reached the rendered view", entity, bad)
			}
		}
		h.key("G")
		h.key("esc")
	}
	h.m.switchEntity("orders")
	h.key("i")
	wantLines(t, infoText(h), "owner ␛]52;c;ZXZpbA==␇ ␛[2J<U+202E>")
	h.key("esc")
	h.m.switchEntity("events/Subscriptions/s")
	h.key("i")
	wantLines(t, infoText(h), "  filter  SQL: note = '␛]8;;http://evil␇'", "  action  SQL: SET x = '␛[31m'",
		"          Subject = ␛[1A", "          property k␛[K = ␛[5m (string)")
}

// With no entity selected, i is disabled and says why.
func TestInfoNoEntity(t *testing.T) {
	clock := clockwork.NewFakeClockAt(t0)
	c := newEngine(t, clock)
	h := newHarness(t, c, clock, Options{}, 80, 24)
	h.m.entity = ""
	h.refresh()
	h.key("i")
	h.wantErr("entity info is disabled: no entity selected")
	if h.m.entInfo != nil || h.m.keys.Info.Enabled() {
		t.Fatal("the info view opened without an entity")
	}
}

// ruleClient is an endpoint that reads rules on request (as remote clients
// do) with a given answer, and counts the reads.
type ruleClient struct {
	broker.Client
	reads atomic.Int64
	err   error
}

func (r *ruleClient) SubscriptionRules(ctx context.Context, path string) ([]broker.Rule, error) {
	r.reads.Add(1)
	if r.err != nil {
		return nil, r.err
	}
	return []broker.Rule{{Name: "only-eu", SQL: "region = 'eu'"}}, nil
}

// On an endpoint that reads rules on request, the view reads them once
// when it opens (not on every poll) and shows them, also through a
// read-only wrapper; a failure is an error line in the view, not a crash.
func TestInfoReadsRulesOnRequest(t *testing.T) {
	clock, eng := infoFixture(t)
	rc := &ruleClient{Client: eng}
	h := newHarness(t, rc, clock, Options{Entity: "events/Subscriptions/audit", ReadOnly: true}, 100, 30)
	h.advance(3 * time.Second)
	if n := rc.reads.Load(); n != 0 {
		t.Fatalf("%d rule reads before the view opened", n)
	}
	h.key("i")
	h.advance(3 * time.Second)
	if n := rc.reads.Load(); n != 1 {
		t.Fatalf("%d rule reads, want 1 for one opening", n)
	}
	wantLines(t, infoText(h), "▸ only-eu", "  filter  SQL: region = 'eu'")
	h.key("esc")
	h.key("i")
	if n := rc.reads.Load(); n != 2 {
		t.Fatalf("%d rule reads, want 2 after opening again", n)
	}
	rc.err = &broker.Error{Code: broker.CodeNotSupported, Message: "subscription rules cannot be read: this endpoint has no Service Bus admin API (generic AMQP 1.0)"}
	h.key("]")
	wantLines(t, infoText(h), "rules unavailable: not supported: subscription rules cannot be read: this",
		"endpoint has no Service Bus admin API (generic AMQP 1.0)")
	if h.m.bar.err != nil {
		t.Fatalf("the failure went to the status bar: %v", h.m.bar.err)
	}
	// Queues have no rules to read.
	h.key("]")
	if n := rc.reads.Load(); h.m.entity != "orders" || n != 3 {
		t.Fatalf("entity %s, %d reads", h.m.entity, n)
	}
}

// TestGoldenEntityInfo compares the info view of a queue and of a
// subscription's rules at 80x24 and at 40 columns with
// testdata/TestGoldenEntityInfo/*.golden (go test -update rewrites them).
func TestGoldenEntityInfo(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {40, 30}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			clock, c := infoFixture(t)
			h := newHarness(t, c, clock, Options{}, size[0], size[1])
			h.key("i")
			t.Run("queue", func(t *testing.T) { golden.RequireEqual(t, h.screen()) })
			h.key("G")
			t.Run("queue-end", func(t *testing.T) { golden.RequireEqual(t, h.screen()) })
			h.key("esc")
			h.m.switchEntity("events/Subscriptions/billing")
			h.refresh()
			h.keys("i", "G")
			t.Run("rules", func(t *testing.T) { golden.RequireEqual(t, h.screen()) })
			for i, l := range strings.Split(h.screen(), "\n") {
				if w := ansi.StringWidth(l); w != size[0] {
					t.Fatalf("line %d is %d wide, want %d", i, w, size[0])
				}
			}
		})
	}
	_ = tea.WindowSizeMsg{}
}

// A rules result read for a view closed since, or for an earlier read of
// the view open, does not reach it; the latest read does.
func TestInfoDropsStaleRules(t *testing.T) {
	clock, eng := infoFixture(t)
	rc := &ruleClient{Client: eng}
	h := newHarness(t, rc, clock, Options{Entity: "events/Subscriptions/audit"}, 100, 30)
	h.key("i")
	old := h.m.entInfo
	stale := rulesMsg{from: old, seq: old.rulesSeq, path: old.path, rules: []broker.Rule{{Name: "stale-rule", SQL: "1=1"}}}
	h.keys("esc", "i")
	h.update(stale)
	h.settle()
	if strings.Contains(infoText(h), "stale-rule") {
		t.Fatal("the rules read for a closed view reached the one open now")
	}
	stale.from, stale.seq = h.m.entInfo, h.m.entInfo.rulesSeq-1
	h.update(stale)
	h.settle()
	if strings.Contains(infoText(h), "stale-rule") {
		t.Fatal("the rules of an earlier read reached the view")
	}
	stale.seq++
	h.update(stale)
	h.settle()
	if !strings.Contains(infoText(h), "stale-rule") {
		t.Fatalf("the latest read did not reach the view:\n%s", infoText(h))
	}
}
