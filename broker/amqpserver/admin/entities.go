package admin

import (
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/atom"
	"github.com/peeklock/peeklock/broker/sas"
)

// render wraps an entity's description in an entry. stats are needed for
// topics only (nil: compute them).
func (h *handler) render(r *http.Request, ent broker.Entity, stats map[string]*topicStats) (atom.Entry, error) {
	host := h.hostOf(r)
	switch ent.Kind {
	case broker.KindTopic:
		if stats == nil {
			list, err := h.eng.Entities(r.Context())
			if err != nil {
				return atom.Entry{}, err
			}
			stats = statsOf(list)
		}
		return h.entry(r, ent.Path, ent.Path, atom.Content{Topic: describeTopic(ent, stats[strings.ToLower(ent.Path)])}), nil
	case broker.KindSubscription:
		_, sub, _ := broker.SplitSubscriptionPath(ent.Path)
		return h.entry(r, ent.Path, sub, atom.Content{Subscription: describeSubscription(ent, host)}), nil
	}
	return h.entry(r, ent.Path, ent.Path, atom.Content{Queue: describeQueue(ent, host)}), nil
}

// lookup returns the entity a route names, or ErrNotFound.
func (h *handler) lookup(r *http.Request, rt route) (broker.Entity, error) {
	if _, sub := broker.SplitAddress(rt.path); sub != broker.SubQueueMain {
		return broker.Entity{}, broker.Errorf(broker.CodeNotFound, "%q is a %s, not an entity", rt.path, sub)
	}
	ent, err := h.eng.Entity(r.Context(), rt.path)
	if err != nil {
		return broker.Entity{}, err
	}
	if (rt.kind == routeEntity) == (ent.Kind == broker.KindSubscription) {
		return broker.Entity{}, broker.Errorf(broker.CodeNotFound, "%s", broker.NotFoundMessage(rt.path))
	}
	return ent, nil
}

func (h *handler) getEntity(w http.ResponseWriter, r *http.Request, rt route) {
	ent, err := h.lookup(r, rt)
	if err != nil {
		h.writeError(w, r, rt.path, err)
		return
	}
	e, err := h.render(r, ent, nil)
	if err != nil {
		h.writeError(w, r, rt.path, err)
		return
	}
	h.writeXML(w, r, http.StatusOK, atom.ContentTypeEntry, e)
}

// readEntry reads and parses a PUT body. A value that is not of its
// element's type is refused with the element's path
// (QueueDescription.LockDuration: ...).
func readEntry(r *http.Request) (*atom.Entry, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodySize+1))
	if err != nil {
		return nil, broker.Errorf(broker.CodeInvalid, "cannot read the request body: %v", err)
	}
	if len(body) > maxBodySize {
		return nil, broker.Errorf(broker.CodeInvalid, "the request body is larger than %d bytes", maxBodySize)
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil, broker.Errorf(broker.CodeInvalid, "the request has no body; send an Atom entry with a description")
	}
	var in atom.Entry
	if err := xml.Unmarshal(body, &in); err != nil {
		var ve *atom.ValueError
		if errors.As(err, &ve) {
			return nil, &broker.Error{Code: broker.CodeInvalid, Message: ve.Error(), Err: ve}
		}
		return nil, broker.Errorf(broker.CodeInvalid, "the request body is not well-formed XML: %v", err)
	}
	if in.XMLName.Local != "entry" {
		return nil, broker.Errorf(broker.CodeInvalid, "the request body is a <%s>, not an Atom <entry>", in.XMLName.Local)
	}
	if in.Content == nil {
		return nil, broker.Errorf(broker.CodeInvalid, "the Atom entry has no <content>")
	}
	return &in, nil
}

// description picks the description a PUT on rt must carry.
func description(in *atom.Entry, rt route) (*entityIn, error) {
	c := in.Content
	if rt.kind == routeSubscription {
		if c.Subscription == nil {
			return nil, broker.Errorf(broker.CodeInvalid, "the entry has no SubscriptionDescription")
		}
		return &entityIn{kind: broker.KindSubscription, settings: c.Subscription.Settings(), defaultRule: c.Subscription.DefaultRuleDescription}, nil
	}
	switch {
	case c.Queue != nil && c.Topic != nil:
		return nil, broker.Errorf(broker.CodeInvalid, "the entry has both a QueueDescription and a TopicDescription")
	case c.Queue != nil:
		return &entityIn{kind: broker.KindQueue, settings: c.Queue.Settings(), authRules: &c.Queue.AuthorizationRules}, nil
	case c.Topic != nil:
		return &entityIn{kind: broker.KindTopic, settings: c.Topic.Settings(), authRules: &c.Topic.AuthorizationRules}, nil
	}
	return nil, broker.Errorf(broker.CodeInvalid, "the entry has neither a QueueDescription nor a TopicDescription")
}

// putEntity creates an entity, or updates it when the request has an
// If-Match header (the SDKs send If-Match: *).
func (h *handler) putEntity(w http.ResponseWriter, r *http.Request, rt route, tok *sas.Token) {
	fail := func(err error) { h.writeError(w, r, rt.path, err) }
	in, err := readEntry(r)
	if err != nil {
		fail(err)
		return
	}
	desc, err := description(in, rt)
	if err != nil {
		fail(err)
		return
	}
	update := r.Header.Get("If-Match") != ""
	h.writeMu.Lock()
	defer h.writeMu.Unlock()
	var old *broker.Entity
	if update {
		o, err := h.lookup(r, rt)
		if err != nil {
			fail(err)
			return
		}
		old = &o
	}
	var oldSettings *broker.EntitySettings
	if old != nil {
		oldSettings = &old.Settings
	}
	settings, err := settingsOf(desc.kind, &desc.settings, oldSettings)
	if err != nil {
		fail(err)
		return
	}
	if err := h.authorizeForward(r, tok, headerForwardAuth, "ForwardTo", deref(desc.settings.ForwardTo), settings.ForwardTo); err != nil {
		fail(err)
		return
	}
	if err := h.authorizeForward(r, tok, headerForwardDLQAuth, "ForwardDeadLetteredMessagesTo", deref(desc.settings.ForwardDeadLetteredMessagesTo), settings.ForwardDeadLetteredMessagesTo); err != nil {
		fail(err)
		return
	}
	// A PUT replaces the whole description: no UserMetadata clears it, and
	// no AuthorizationRules clears them (a SubscriptionDescription has none:
	// a subscription keeps its own).
	kind := desc.kind
	ent := broker.Entity{Path: rt.path, Kind: kind, Settings: settings, UserMetadata: deref(desc.settings.UserMetadata)}
	if kind != broker.KindSubscription {
		if ent.AuthorizationRules, err = authorizationRulesOf(kind, desc.authRules); err != nil {
			fail(err)
			return
		}
	} else if old != nil {
		ent.AuthorizationRules = old.AuthorizationRules
	}
	if old != nil {
		ent.Path, ent.Rules = old.Path, old.Rules
	} else if desc.defaultRule != nil {
		rule, err := ruleOf(desc.defaultRule, "")
		if err != nil {
			fail(err)
			return
		}
		ent.Rules = []broker.Rule{rule}
	}
	status := http.StatusCreated
	if update {
		status = http.StatusOK
		err = h.eng.UpdateEntity(r.Context(), ent)
	} else {
		err = h.eng.CreateEntity(r.Context(), ent)
	}
	if err != nil {
		fail(err)
		return
	}
	got, err := h.lookup(r, rt)
	if err != nil {
		fail(err)
		return
	}
	e, err := h.render(r, got, nil)
	if err != nil {
		fail(err)
		return
	}
	h.writeXML(w, r, status, atom.ContentTypeEntry, e)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (h *handler) deleteEntity(w http.ResponseWriter, r *http.Request, rt route) {
	h.writeMu.Lock()
	defer h.writeMu.Unlock()
	if _, err := h.lookup(r, rt); err != nil {
		h.writeError(w, r, rt.path, err)
		return
	}
	if err := h.eng.DeleteEntity(r.Context(), rt.path); err != nil {
		h.writeError(w, r, rt.path, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// listEntities answers $Resources/Queues and $Resources/Topics.
func (h *handler) listEntities(w http.ResponseWriter, r *http.Request, kind broker.EntityKind, title string) {
	path := "$Resources/" + title
	p, err := pageOf(r.URL.Query())
	if err != nil {
		h.writeError(w, r, path, err)
		return
	}
	list, err := h.eng.Entities(r.Context())
	if err != nil {
		h.writeError(w, r, path, err)
		return
	}
	var stats map[string]*topicStats
	if kind == broker.KindTopic {
		stats = statsOf(list)
	}
	var of []broker.Entity
	for _, ent := range list {
		if ent.Kind == kind {
			of = append(of, ent)
		}
	}
	h.writeFeed(w, r, path, title, of, p, stats)
}

// listSubscriptions answers <topic>/Subscriptions.
func (h *handler) listSubscriptions(w http.ResponseWriter, r *http.Request, topic string) {
	path := topic + "/Subscriptions"
	p, err := pageOf(r.URL.Query())
	if err != nil {
		h.writeError(w, r, path, err)
		return
	}
	t, err := h.eng.Entity(r.Context(), topic)
	if err == nil && t.Kind != broker.KindTopic {
		err = broker.Errorf(broker.CodeNotFound, "%q is a %s, not a topic", t.Path, t.Kind)
	}
	if err != nil {
		h.writeError(w, r, path, err)
		return
	}
	list, err := h.eng.Entities(r.Context())
	if err != nil {
		h.writeError(w, r, path, err)
		return
	}
	var subs []broker.Entity
	for _, ent := range list {
		if tp, _, ok := broker.SplitSubscriptionPath(ent.Path); ok && ent.Kind == broker.KindSubscription && strings.EqualFold(tp, t.Path) {
			subs = append(subs, ent)
		}
	}
	h.writeFeed(w, r, path, "Subscriptions", subs, p, nil)
}

// writeFeed answers with a feed of the entities of page p of list.
func (h *handler) writeFeed(w http.ResponseWriter, r *http.Request, path, title string, list []broker.Entity, p page, stats map[string]*topicStats) {
	f := h.feed(r, path, title, p, len(list))
	for _, ent := range window(list, p) {
		e, err := h.render(r, ent, stats)
		if err != nil {
			h.writeError(w, r, path, err)
			return
		}
		f.Entries = append(f.Entries, e)
	}
	h.writeXML(w, r, http.StatusOK, atom.ContentTypeFeed, f)
}

// feed starts the feed of page p of a listing of n entries.
func (h *handler) feed(r *http.Request, path, title string, p page, n int) *atom.Feed {
	id := h.entryID(r, path)
	f := &atom.Feed{
		Title:   atom.Text{Type: "text", Text: title},
		ID:      id,
		Updated: h.now(),
		Links:   []atom.Link{{Rel: "self", Href: id}},
	}
	if next, ok := p.next(n); ok {
		f.Links = append(f.Links, atom.Link{Rel: "next", Href: id + "?" + next.query(r.URL.Query())})
	}
	return f
}
