package ui

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/peeklock/peeklock/broker"
)

// RulesSource says where the rules of a subscription in the entity
// information view come from, which decides what "no rules" means.
type RulesSource uint8

// Sources of a subscription's rules.
const (
	// RulesListed: the endpoint lists rules with the entity (the embedded
	// engine, which lists the $Default TrueFilter as a rule); no rule means
	// that the subscription gets nothing.
	RulesListed RulesSource = iota
	// RulesLoading: the rules are being read (broker.RuleReader).
	RulesLoading
	// RulesRead: the rules were read as the endpoint lists them; no rule
	// means that the subscription gets nothing.
	RulesRead
	// RulesFailed: reading the rules failed; RulesErr says why.
	RulesFailed
)

// EntityInfo is what the entity information view shows: the entity as the
// endpoint listed it, with what the model knows around it.
type EntityInfo struct {
	Entity broker.Entity
	// SettingsKnown is false when the endpoint did not report the entity's
	// settings (it cannot list entities, or the credential may not): the
	// view then says so instead of showing defaults.
	SettingsKnown bool
	// Why explains unknown settings and counts (the endpoint's notice).
	Why string
	// Subscriptions of a topic, in list order.
	Subscriptions []broker.Entity
	// Rules of a subscription, from Source; RulesErr when it failed.
	Rules    []broker.Rule
	Source   RulesSource
	RulesErr string
}

// infoWideWidth is the width from which a setting's name and value share a
// line; narrower views put the value under its name. infoKeyW is the width
// of the names.
const (
	infoWideWidth = 48
	infoKeyW      = 24
)

// EntityInfoLines renders the entity information view of info, w cells
// wide: kind and path, counts, settings (status first, marking defaults),
// times, authorization rules (names and rights, never the keys), user
// metadata, and a topic's subscriptions or a subscription's rules. Every
// text that comes from the endpoint passes through Sanitize. The model
// renders it when the view opens or the entity changes and slices it per
// frame, so a frame costs what is on screen.
func EntityInfoLines(c *Common, info EntityInfo, w int) []string {
	st := c.Styles
	e := info.Entity
	w = max(w, 1)
	var lines []string
	section := func(title string) { lines = append(lines, sectionTitle(c, title, w)...) }
	prop := func(name, value string) {
		if w >= infoWideWidth {
			for i, l := range wrapText(value, w-infoKeyW-1) {
				label := blank(infoKeyW)
				if i == 0 {
					label = fit(name, infoKeyW)
				}
				lines = append(lines, st.Label.Render(label)+" "+st.Text.Render(l))
			}
			return
		}
		lines = append(lines, st.Label.Render(name))
		for _, l := range wrapText(value, w-2) {
			lines = append(lines, "  "+st.Text.Render(l))
		}
	}
	faint := func(s string) {
		for _, l := range wrapText(s, w) {
			lines = append(lines, st.Faint.Render(l))
		}
	}

	for _, l := range wrapText(capitalize(e.Kind.String())+" "+Sanitize(e.Path), w) {
		lines = append(lines, st.Title.Render(l))
	}
	if info.Why != "" {
		faint(Sanitize(info.Why))
	}

	section("Messages")
	for _, l := range wrapItems(countItems(e, len(info.Subscriptions)), w) {
		lines = append(lines, st.Text.Render(l))
	}

	section("Settings")
	if !info.SettingsKnown {
		faint("not reported by this endpoint")
	} else {
		for _, s := range settingLines(e) {
			prop(s[0], s[1])
		}
	}

	if !e.CreatedAt.IsZero() || !e.UpdatedAt.IsZero() || !e.AccessedAt.IsZero() {
		section("Times")
		for _, t := range []struct {
			name string
			at   time.Time
		}{{"Created", e.CreatedAt}, {"Updated", e.UpdatedAt}, {"Last accessed", e.AccessedAt}} {
			if !t.at.IsZero() {
				prop(t.name, t.at.UTC().Format("2006-01-02 15:04:05Z")+" ("+Age(c.Now, t.at)+" ago)")
			}
		}
	}

	if info.SettingsKnown && len(e.AuthorizationRules) > 0 {
		lines = append(lines, authRuleLines(c, e.AuthorizationRules, w)...)
	}

	if e.UserMetadata != "" {
		section("User metadata")
		for _, para := range strings.Split(SanitizeMultiline(e.UserMetadata), "\n") {
			for _, l := range wrapText(para, w) {
				lines = append(lines, st.Text.Render(l))
			}
		}
	}

	switch e.Kind {
	case broker.KindTopic:
		lines = append(lines, subscriptionLines(c, info.Subscriptions, w)...)
	case broker.KindSubscription:
		lines = append(lines, ruleLines(c, info, w)...)
	}
	return lines
}

// countItems returns the entity's counts for the status line.
func countItems(e broker.Entity, subs int) []string {
	n := e.Counts
	size := "size " + Bytes(n.SizeBytes)
	if n.SizeBytes >= 1024 {
		size += " (" + strconv.FormatInt(n.SizeBytes, 10) + " bytes)"
	}
	if e.Kind == broker.KindTopic {
		return []string{size, fmt.Sprintf("%d subscription(s)", subs)}
	}
	if n.Unknown {
		return []string{"counts unknown to this endpoint", Count(n.Locked) + " locked by this dashboard"}
	}
	items := []string{
		Count(n.Active) + " active", Count(n.Locked) + " locked", Count(n.Deferred) + " deferred",
		Count(n.Scheduled) + " scheduled", Count(n.DeadLettered) + " dead-lettered",
		Count(n.TransferDeadLettered) + " transfer dead-lettered",
	}
	if n.Transfer > 0 {
		items = append(items, Count(n.Transfer)+" in transfer")
	}
	return append(items, size)
}

// settingLines returns the settings that apply to the entity's kind, as
// name and value, values with units and "(default)" where the setting has
// its default value.
func settingLines(e broker.Entity) [][2]string {
	s := e.Settings.Normalize()
	def := func(v string, isDefault bool) string {
		if isDefault {
			return v + " (default)"
		}
		return v
	}
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return def("off", true)
	}
	ttl := def(LongDuration(s.DefaultMessageTimeToLive), s.DefaultMessageTimeToLive == broker.MaxTimeToLive)
	if s.DefaultMessageTimeToLive == broker.MaxTimeToLive {
		ttl = def("never expires", true)
	}
	dup := onOff(false)
	if s.RequiresDuplicateDetection {
		dup = "on, window " + def(LongDuration(s.DuplicateDetectionHistoryTimeWindow), s.DuplicateDetectionHistoryTimeWindow == broker.DefaultDuplicateWindow)
	}
	forward := func(to string) string {
		if to == "" {
			return def("none", true)
		}
		return Sanitize(to)
	}
	maxDelivery := strconv.Itoa(int(s.MaxDeliveryCount)) + " deliveries"
	lock := [2]string{"Lock duration", def(LongDuration(s.LockDuration), s.LockDuration == broker.DefaultLockDuration)}
	delivery := [2]string{"Max delivery count", def(maxDelivery, s.MaxDeliveryCount == broker.DefaultMaxDelivery)}
	ttlLine := [2]string{"Default message TTL", ttl}
	dlExpiry := [2]string{"Dead-letter on expiry", onOff(s.DeadLetteringOnMessageExpiration)}
	dupLine := [2]string{"Duplicate detection", dup}
	session := [2]string{"Requires session", onOff(s.RequiresSession)}
	maxSize := [2]string{"Max size", def(strconv.FormatInt(s.MaxSizeInMegabytes, 10)+" MB", s.MaxSizeInMegabytes == broker.DefaultMaxSizeInMegabytes)}
	maxMsg := [2]string{"Max message size", def(strconv.FormatInt(s.MaxMessageSizeInKilobytes, 10)+" KB", s.MaxMessageSizeInKilobytes == broker.DefaultMaxMessageSizeInKilobytes)}
	fwd := [2]string{"Forward to", forward(s.ForwardTo)}
	fwdDL := [2]string{"Forward dead letters to", forward(s.ForwardDeadLetteredMessagesTo)}
	status := [2]string{"Status", statusText(s.Status)}
	idle := def("never", true)
	if s.AutoDeleteOnIdle < broker.MaxTimeToLive {
		idle = "after " + LongDuration(s.AutoDeleteOnIdle) + " idle"
	}
	autoDelete := [2]string{"Auto-delete", idle}
	partitioned := [2]string{"Partitioning", onOff(s.EnablePartitioning)}
	batched := [2]string{"Batched operations", def("on", true)}
	if s.DisableBatchedOperations {
		batched[1] = "off"
	}
	switch e.Kind {
	case broker.KindTopic:
		return [][2]string{status, ttlLine, dupLine, maxSize, maxMsg, autoDelete, partitioned, batched}
	case broker.KindSubscription:
		return [][2]string{status, lock, delivery, ttlLine, dlExpiry, session, fwd, fwdDL, autoDelete, batched}
	}
	return [][2]string{status, lock, delivery, ttlLine, dlExpiry, dupLine, session, maxSize, maxMsg, fwd, fwdDL, autoDelete, partitioned, batched}
}

// statusText says what an entity status lets through.
func statusText(st broker.EntityStatus) string {
	switch st {
	case broker.StatusActive:
		return "Active (default)"
	case broker.StatusDisabled:
		return "Disabled: no sends, no receives"
	case broker.StatusSendDisabled:
		return "SendDisabled: receives only"
	case broker.StatusReceiveDisabled:
		return "ReceiveDisabled: sends only"
	}
	return st.String()
}

// authRuleLines renders an entity's authorization rules: key name, rights
// and times, never the keys.
func authRuleLines(c *Common, rules []broker.AuthorizationRule, w int) []string {
	st := c.Styles
	lines := sectionTitle(c, fmt.Sprintf("Authorization rules (%d)", len(rules)), w)
	for _, r := range rules {
		for _, l := range wrapText(Sanitize(r.KeyName)+": "+strings.Join(r.Rights.Names(), ", "), w) {
			lines = append(lines, st.Text.Render(l))
		}
		details := []string{"one key"}
		if r.SecondaryKey != "" {
			details[0] = "two keys"
		}
		if !r.CreatedTime.IsZero() {
			details = append(details, "created "+r.CreatedTime.UTC().Format("2006-01-02 15:04:05Z"))
		}
		if !r.ModifiedTime.IsZero() {
			details = append(details, "modified "+r.ModifiedTime.UTC().Format("2006-01-02 15:04:05Z"))
		}
		for _, l := range wrapItems(details, w-2) {
			lines = append(lines, "  "+st.Faint.Render(l))
		}
	}
	return lines
}

// subscriptionLines renders a topic's subscriptions with their counts (A
// active, L locked, D deferred, S scheduled, X dead-lettered, transfer
// dead-lettered included), in columns like the entity list.
func subscriptionLines(c *Common, subs []broker.Entity, w int) []string {
	st := c.Styles
	lines := sectionTitle(c, fmt.Sprintf("Subscriptions (%d)", len(subs)), w)
	if len(subs) == 0 {
		return append(lines, st.Faint.Render("none: messages sent to this topic go nowhere"))
	}
	const col = 6
	nameW := max(8, w-5*col)
	lines = append(lines, st.Header.Render(fit("name", nameW)+fitLeft("A", col)+fitLeft("L", col)+
		fitLeft("D", col)+fitLeft("S", col)+fitLeft("X", col)))
	for _, s := range subs {
		name := s.Path
		if _, sub, ok := broker.SplitSubscriptionPath(s.Path); ok {
			name = sub
		}
		n := s.Counts
		lines = append(lines, st.Text.Render(fit(Sanitize(name), nameW)+fitLeft(Count(n.Active), col)+
			fitLeft(Count(n.Locked), col)+fitLeft(Count(n.Deferred), col)+fitLeft(Count(n.Scheduled), col)+
			fitLeft(Count(n.Count(broker.CategoryDeadLettered)), col)))
	}
	return lines
}

// ruleLines renders a subscription's rules: name, filter and action.
func ruleLines(c *Common, info EntityInfo, w int) []string {
	st := c.Styles
	switch info.Source {
	case RulesLoading:
		return append(sectionTitle(c, "Rules", w), st.Faint.Render("reading the rules…"))
	case RulesFailed:
		lines := sectionTitle(c, "Rules", w)
		for _, l := range wrapText("rules unavailable: "+Sanitize(info.RulesErr), w) {
			lines = append(lines, st.Error.Render(l))
		}
		return lines
	}
	lines := sectionTitle(c, fmt.Sprintf("Rules (%d)", len(info.Rules)), w)
	if len(info.Rules) == 0 {
		for _, l := range wrapText("none: no message reaches this subscription", w) {
			lines = append(lines, st.Faint.Render(l))
		}
		return lines
	}
	const indent = "    "
	field := func(name, value string) {
		head := "  " + fit(name, 7) + " "
		for i, l := range wrapText(value, w-len(head)) {
			if i == 0 {
				lines = append(lines, st.Label.Render(head)+st.Text.Render(l))
			} else {
				lines = append(lines, blank(len(head))+st.Text.Render(l))
			}
		}
	}
	// values lists typed values by name under a filter or action:
	// "property tenant = acme (string)", "parameter @p1 = 5 (int64)".
	values := func(what string, vs map[string]any) {
		for _, k := range slices.Sorted(maps.Keys(vs)) {
			v := vs[k]
			text := what + " " + Sanitize(k) + " = " + Sanitize(PropertyValue(v)) + " (" + PropertyType(v) + ")"
			for _, l := range wrapText(text, w-len(indent)-6) {
				lines = append(lines, blank(len(indent)+6)+st.Text.Render(l))
			}
		}
	}
	for i, r := range info.Rules {
		if i > 0 {
			lines = append(lines, "")
		}
		title := Sanitize(r.Name)
		if !r.CreatedAt.IsZero() {
			title += st.Faint.Render("  created " + r.CreatedAt.UTC().Format("2006-01-02 15:04:05Z"))
		}
		lines = append(lines, st.Title.Render("▸ ")+title)
		switch {
		case r.Filter != nil:
			field("filter", "correlation: every field below must equal")
			f := r.Filter
			for _, kv := range [][2]string{{"CorrelationId", f.CorrelationID}, {"MessageId", f.MessageID}, {"To", f.To},
				{"ReplyTo", f.ReplyTo}, {"Subject", f.Subject}, {"SessionId", f.SessionID},
				{"ReplyToSessionId", f.ReplyToSessionID}, {"ContentType", f.ContentType}} {
				if kv[1] != "" {
					for _, l := range wrapText(kv[0]+" = "+Sanitize(kv[1]), w-len(indent)-6) {
						lines = append(lines, blank(len(indent)+6)+st.Text.Render(l))
					}
				}
			}
			values("property", f.Properties)
		case r.SQL == "1=0":
			field("filter", "FalseFilter (1=0): matches no message")
		case r.SQL != "":
			field("filter", "SQL: "+Sanitize(r.SQL))
			values("parameter", r.Parameters)
		default:
			field("filter", "TrueFilter (1=1): matches every message")
		}
		if r.Action != "" {
			field("action", "SQL: "+Sanitize(r.Action))
			values("parameter", r.ActionParameters)
		} else {
			field("action", "none")
		}
	}
	return lines
}

// LongDuration formats a setting's duration exactly, with units: 30s,
// 1m30s, 2h, 14d, 1d12h, 500ms.
func LongDuration(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	var b strings.Builder
	day := 24 * time.Hour
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{day, "d"}, {time.Hour, "h"}, {time.Minute, "m"}} {
		if d >= u.d {
			b.WriteString(strconv.FormatInt(int64(d/u.d), 10) + u.name)
			d %= u.d
		}
	}
	if d > 0 {
		s := strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
		b.WriteString(s + "s")
	}
	return b.String()
}

// wrapText wraps plain, sanitised text at w cells, at spaces where it can;
// it returns at least one line.
func wrapText(s string, w int) []string {
	if w <= 0 {
		return []string{s}
	}
	if ansi.StringWidth(s) <= w {
		return []string{s}
	}
	return strings.Split(ansi.Wrap(s, w, ""), "\n")
}

// wrapItems joins items with " · " into lines of at most w cells.
func wrapItems(items []string, w int) []string {
	var lines []string
	cur := ""
	for _, it := range items {
		switch {
		case cur == "":
			cur = it
		case ansi.StringWidth(cur)+3+ansi.StringWidth(it) <= w:
			cur += " · " + it
		default:
			lines = append(lines, cur)
			cur = it
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// capitalize upper-cases the first letter of an ASCII word.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
