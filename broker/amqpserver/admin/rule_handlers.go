package admin

import (
	"net/http"
	"slices"

	"github.com/peeklock/peeklock/broker"
)

// canonicalRules stores the lone $Default TrueFilter as no rule at all,
// which is how the engine spells "takes every message".
func canonicalRules(rules []broker.Rule) []broker.Rule {
	if len(rules) == 1 && rules[0].Filter == nil && rules[0].SQL == "" && rules[0].Action == "" && rules[0].Name == DefaultRuleName {
		return nil
	}
	return rules
}

// rulePath returns the resource path of a rule.
func rulePath(rt route, name string) string { return rt.path + "/Rules/" + name }

func (h *handler) ruleEntry(r *http.Request, rt route, rule broker.Rule) entryXML {
	return h.entry(r, rulePath(rt, rule.Name), rule.Name, contentXML{Rule: describeRule(rule)})
}

func errRuleNotFound(rt route) error {
	return broker.Errorf(broker.CodeNotFound, "the rule %q of subscription %q could not be found", rt.rule, rt.path)
}

func (h *handler) listRules(w http.ResponseWriter, r *http.Request, rt route) {
	path := rt.path + "/Rules"
	p, err := pageOf(r.URL.Query())
	if err != nil {
		h.writeError(w, r, path, err)
		return
	}
	ent, err := h.lookup(r, rt)
	if err != nil {
		h.writeError(w, r, path, err)
		return
	}
	f := h.feed(r, path, "Rules")
	for _, rule := range window(effectiveRules(ent), p) {
		f.Entries = append(f.Entries, h.ruleEntry(r, rt, rule))
	}
	h.writeXML(w, r, http.StatusOK, contentTypeFeed, f)
}

func (h *handler) getRule(w http.ResponseWriter, r *http.Request, rt route) {
	path := rulePath(rt, rt.rule)
	ent, err := h.lookup(r, rt)
	if err != nil {
		h.writeError(w, r, path, err)
		return
	}
	rules := effectiveRules(ent)
	i := findRule(rules, rt.rule)
	if i < 0 {
		h.writeError(w, r, path, errRuleNotFound(rt))
		return
	}
	h.writeXML(w, r, http.StatusOK, contentTypeEntry, h.ruleEntry(r, rt, rules[i]))
}

// putRule creates a rule, or replaces it when the request has If-Match.
// Only the subscription's rules change (engine.Engine.SetRules): its messages
// and their locks stay. A replaced rule keeps its CreatedAt.
func (h *handler) putRule(w http.ResponseWriter, r *http.Request, rt route) {
	path := rulePath(rt, rt.rule)
	fail := func(err error) { h.writeError(w, r, path, err) }
	in, err := readEntry(r)
	if err != nil {
		fail(err)
		return
	}
	if in.Content.Rule == nil {
		fail(broker.Errorf(broker.CodeInvalid, "the entry has no RuleDescription"))
		return
	}
	rule, err := ruleOf(in.Content.Rule, rt.rule)
	if err != nil {
		fail(err)
		return
	}
	update := r.Header.Get("If-Match") != ""
	h.writeMu.Lock()
	defer h.writeMu.Unlock()
	ent, err := h.lookup(r, rt)
	if err != nil {
		fail(err)
		return
	}
	rules := slices.Clone(effectiveRules(ent))
	i := findRule(rules, rt.rule)
	status := http.StatusCreated
	switch {
	case update && i < 0:
		fail(errRuleNotFound(rt))
		return
	case update:
		status = http.StatusOK
		rules[i] = rule
	case i >= 0:
		fail(broker.Errorf(broker.CodeAlreadyExists, "the rule %q exists already in subscription %q", rules[i].Name, ent.Path))
		return
	default:
		rules = append(rules, rule)
	}
	if err := h.eng.SetRules(r.Context(), ent.Path, canonicalRules(rules)); err != nil {
		fail(err)
		return
	}
	// Answer with the rule as stored, with its CreatedAt.
	got, err := h.lookup(r, rt)
	if err != nil {
		fail(err)
		return
	}
	rules = effectiveRules(got)
	if i := findRule(rules, rt.rule); i >= 0 {
		rule = rules[i]
	}
	h.writeXML(w, r, status, contentTypeEntry, h.ruleEntry(r, rt, rule))
}

func (h *handler) deleteRule(w http.ResponseWriter, r *http.Request, rt route) {
	path := rulePath(rt, rt.rule)
	fail := func(err error) { h.writeError(w, r, path, err) }
	h.writeMu.Lock()
	defer h.writeMu.Unlock()
	ent, err := h.lookup(r, rt)
	if err != nil {
		fail(err)
		return
	}
	rules := slices.Clone(effectiveRules(ent))
	i := findRule(rules, rt.rule)
	if i < 0 {
		fail(errRuleNotFound(rt))
		return
	}
	if len(rules) == 1 {
		fail(broker.Errorf(broker.CodeNotSupported,
			"the rule %q is the last one of subscription %q; a subscription here cannot be left without rules (it would take every message, not none)",
			rules[i].Name, ent.Path))
		return
	}
	if err := h.eng.SetRules(r.Context(), ent.Path, canonicalRules(slices.Delete(rules, i, i+1))); err != nil {
		fail(err)
		return
	}
	w.WriteHeader(http.StatusOK)
}
