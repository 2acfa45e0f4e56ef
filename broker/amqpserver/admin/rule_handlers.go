package admin

import (
	"net/http"
	"slices"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/atom"
)

// rulePath returns the resource path of a rule.
func rulePath(rt route, name string) string { return rt.path + "/Rules/" + name }

func (h *handler) ruleEntry(r *http.Request, rt route, rule broker.Rule) atom.Entry {
	return h.entry(r, rulePath(rt, rule.Name), rule.Name, atom.Content{Rule: describeRule(rule)})
}

// errRuleNotFound is the error for a rule the subscription does not have,
// worded as the engine words it (broker.EntityRef).
func (h *handler) errRuleNotFound(rt route) error {
	ref := broker.EntityRef(h.eng.Namespace(), broker.KindSubscription, rulePath(rt, rt.rule))
	return broker.Errorf(broker.CodeNotFound, "%s", broker.NotFoundMessage(ref))
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
	f := h.feed(r, path, "Rules", p, len(ent.Rules))
	for _, rule := range window(broker.RulesByName(ent.Rules), p) {
		f.Entries = append(f.Entries, h.ruleEntry(r, rt, rule))
	}
	h.writeXML(w, r, http.StatusOK, atom.ContentTypeFeed, f)
}

func (h *handler) getRule(w http.ResponseWriter, r *http.Request, rt route) {
	path := rulePath(rt, rt.rule)
	ent, err := h.lookup(r, rt)
	if err != nil {
		h.writeError(w, r, path, err)
		return
	}
	rules := ent.Rules
	i := findRule(rules, rt.rule)
	if i < 0 {
		h.writeError(w, r, path, h.errRuleNotFound(rt))
		return
	}
	h.writeXML(w, r, http.StatusOK, atom.ContentTypeEntry, h.ruleEntry(r, rt, rules[i]))
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
	status := http.StatusCreated
	if update {
		rules := slices.Clone(ent.Rules)
		i := findRule(rules, rt.rule)
		if i < 0 {
			fail(h.errRuleNotFound(rt))
			return
		}
		status = http.StatusOK
		rules[i] = rule
		err = h.eng.SetRules(r.Context(), ent.Path, rules)
	} else {
		err = h.eng.AddRule(r.Context(), ent.Path, rule) // ErrAlreadyExists for a name in use
	}
	if err != nil {
		fail(err)
		return
	}
	// Answer with the rule as stored, with its CreatedAt.
	got, err := h.lookup(r, rt)
	if err != nil {
		fail(err)
		return
	}
	if i := findRule(got.Rules, rt.rule); i >= 0 {
		rule = got.Rules[i]
	}
	h.writeXML(w, r, status, atom.ContentTypeEntry, h.ruleEntry(r, rt, rule))
}

// deleteRule removes a rule (engine.Engine.RemoveRule); removing the last
// one leaves the subscription without rules, taking no message, as in
// Service Bus.
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
	if err := h.eng.RemoveRule(r.Context(), ent.Path, rt.rule); err != nil {
		fail(err)
		return
	}
	w.WriteHeader(http.StatusOK)
}
