package admin

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sas"
)

// peeklockPrefix starts the paths of what peeklock answers beside the
// Service Bus API, for its own command line (peeklock history and list
// against a running serve), as JSON:
//
//	GET /$peeklock/history?entity=ADDRESS&seq=N  a stored message's history (broker.History); Listen or Manage
//	GET /$peeklock/entities                      every entity with the engine's counts, locks included ([]broker.Entity); Manage
//
// The token must cover the path (a namespace-wide one does).
// Service Bus has neither: there the paths are unknown entities (404).
const peeklockPrefix = "$peeklock/"

// servePeeklock answers a request for a path under peeklockPrefix and
// reports whether path was one.
func (h *handler) servePeeklock(w http.ResponseWriter, r *http.Request, path string) bool {
	if len(path) < len(peeklockPrefix) || !strings.EqualFold(path[:len(peeklockPrefix)], peeklockPrefix) {
		return false
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		h.writeErrorStatus(w, r, path, http.StatusMethodNotAllowed, broker.Errorf(broker.CodeInvalid, "the method %s is not allowed on /%s; use GET", r.Method, path))
		return true
	}
	var body any
	var err error
	switch strings.ToLower(path[len(peeklockPrefix):]) {
	case "history":
		body, err = h.peeklockHistory(r, path)
	case "entities":
		body, err = h.peeklockEntities(r, path)
	default:
		err = broker.Errorf(broker.CodeNotFound, "peeklock answers /$peeklock/history and /$peeklock/entities, not /%s", path)
	}
	if err != nil {
		h.writeError(w, r, path, err)
		return true
	}
	b, err := json.Marshal(body)
	if err != nil {
		h.writeError(w, r, path, err)
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
	return true
}

// peeklockHistory is GET /$peeklock/history.
func (h *handler) peeklockHistory(r *http.Request, path string) (any, error) {
	q := r.URL.Query()
	entity := strings.Trim(q.Get("entity"), "/")
	seq, err := strconv.ParseInt(q.Get("seq"), 10, 64)
	if entity == "" || err != nil || seq < 0 {
		return nil, broker.Errorf(broker.CodeInvalid, "/$peeklock/history wants entity=ADDRESS and seq=SEQUENCE-NUMBER")
	}
	tok, err := h.authorize(r, path)
	if err != nil {
		return nil, err
	}
	if !tok.Rights.Has(sas.Listen) && !tok.Rights.Has(sas.Manage) {
		return nil, sas.MissingClaim(sas.Listen, entity)
	}
	return h.eng.History(r.Context(), entity, seq)
}

// peeklockEntities is GET /$peeklock/entities.
func (h *handler) peeklockEntities(r *http.Request, path string) (any, error) {
	tok, err := h.authorize(r, path)
	if err != nil {
		return nil, err
	}
	if !tok.Rights.Has(sas.Manage) {
		return nil, sas.MissingClaim(sas.Manage, path)
	}
	return h.eng.Entities(r.Context())
}
