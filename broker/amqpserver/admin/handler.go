package admin

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/entra"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/logsafe"
	"github.com/peeklock/peeklock/broker/atom"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/sas"
)

// Failed requests are logged in a burst of failedLogBurst lines, then one
// per failedLogInterval; the lines held back are counted in the next.
const (
	failedLogBurst    = 20
	failedLogInterval = 3 * time.Second
)

// maxBodySize bounds a PUT body; descriptions are a few kilobytes.
const maxBodySize = 1 << 20

// Options configure the admin handler. The zero value serves the emulator's
// default key on the engine's clock.
type Options struct {
	// Keys are the shared access keys by key name; empty means
	// sas.DefaultKeys() (RootManageSharedAccessKey / SAS_KEY_VALUE).
	Keys map[string]string
	// KeyRights limits keys to rights, by key name; a key not named has
	// every right. Every admin operation needs Manage.
	KeyRights map[string]sas.Rights
	// Host is the namespace's host name as clients address it (such as
	// "localhost" or "sbemulatorns.example"). A token's audience must name
	// this host or the request's Host header; ports are ignored. Empty means
	// only the Host header. It is also the host of the sb:// URIs written
	// for ForwardTo settings and the ids of entries.
	Host string
	// EntraID, when set, also accepts Microsoft Entra ID tokens
	// ("Authorization: Bearer TOKEN", or the bare token as the Go SDK's
	// admin client sends it) without checking their signature, for local
	// development (see package entra); nil accepts SAS only.
	EntraID *entra.Validator
	// Clock is the time source for token expiry and timestamps; nil means
	// the engine's clock.
	Clock clockwork.Clock
	// Logger receives one line per failed request; nil discards.
	Logger *slog.Logger
	// Metrics, if set, serves GET /metrics (without an api-version query
	// parameter, like /health) without authorization: Prometheus scrapers
	// carry no shared access signature, and the admin port listens on the
	// loopback interface by default.
	Metrics http.Handler
}

// handler serves the management API; see the package documentation.
type handler struct {
	eng     *engine.Engine
	auth    *sas.Validator
	entra   *entra.Validator
	host    string
	clock   clockwork.Clock
	log     *slog.Logger
	noisy   *logsafe.Limiter // the log budget of failed requests
	started time.Time
	metrics http.Handler

	// writeMu serialises changes: rule changes read, modify and write back
	// a subscription's whole rule list.
	writeMu sync.Mutex
}

// NewHandler returns the HTTP handler of the management API in front of eng.
func NewHandler(eng *engine.Engine, opts Options) http.Handler {
	h := &handler{
		eng:   eng,
		entra: opts.EntraID,
		host:  opts.Host,
		clock: opts.Clock,
		log:   opts.Logger,

		metrics: opts.Metrics,
		noisy:   logsafe.NewLimiter(failedLogBurst, failedLogInterval),
	}
	if h.clock == nil {
		h.clock = eng.Clock()
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.auth = sas.NewValidator(opts.Keys, h.clock).WithRights(opts.KeyRights)
	h.started = h.clock.Now().UTC()
	return h
}

// hostOf returns the host name the answers use: Options.Host, or the
// request's Host header.
func (h *handler) hostOf(r *http.Request) string {
	if h.host != "" {
		return h.host
	}
	return r.Host
}

// ServeHTTP routes a request; see the package documentation.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.Trim(r.URL.Path, "/")
	if strings.EqualFold(path, "health") && !r.URL.Query().Has("api-version") {
		h.health(w, r)
		return
	}
	if h.metrics != nil && strings.EqualFold(path, "metrics") && !r.URL.Query().Has("api-version") {
		h.serveMetrics(w, r)
		return
	}
	if h.servePeeklock(w, r, path) {
		return
	}
	rt, err := parseRoute(path)
	if err != nil {
		h.writeError(w, r, path, err)
		return
	}
	if !rt.allows(r.Method) {
		w.Header().Set("Allow", rt.allow())
		h.writeErrorStatus(w, r, path, http.StatusMethodNotAllowed, broker.Errorf(broker.CodeInvalid,
			"the method %s is not allowed on this resource; use %s", r.Method, rt.allow()))
		return
	}
	tok, err := h.authorize(r, path)
	if err == nil {
		err = h.requireManage(r, rt, tok)
	}
	if err != nil {
		h.writeError(w, r, path, err)
		return
	}
	switch rt.kind {
	case routeNamespace:
		h.namespaceInfo(w, r)
	case routeQueues:
		h.listEntities(w, r, broker.KindQueue, "Queues")
	case routeTopics:
		h.listEntities(w, r, broker.KindTopic, "Topics")
	case routeSubscriptions:
		h.listSubscriptions(w, r, rt.topic)
	case routeRules:
		h.listRules(w, r, rt)
	case routeEntity, routeSubscription:
		switch r.Method {
		case http.MethodGet:
			h.getEntity(w, r, rt)
		case http.MethodPut:
			h.putEntity(w, r, rt, tok)
		case http.MethodDelete:
			h.deleteEntity(w, r, rt)
		}
	case routeRule:
		switch r.Method {
		case http.MethodGet:
			h.getRule(w, r, rt)
		case http.MethodPut:
			h.putRule(w, r, rt)
		case http.MethodDelete:
			h.deleteRule(w, r, rt)
		}
	}
}

// serveMetrics serves Options.Metrics to GET and HEAD.
func (h *handler) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		h.writeErrorStatus(w, r, "metrics", http.StatusMethodNotAllowed, broker.Errorf(broker.CodeInvalid, "the method %s is not allowed on /metrics; use GET", r.Method))
		return
	}
	h.metrics.ServeHTTP(w, r)
}

// health answers like the emulator's health probe.
func (h *handler) health(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		h.writeErrorStatus(w, r, "health", http.StatusMethodNotAllowed, broker.Errorf(broker.CodeInvalid, "the method %s is not allowed on /health; use GET", r.Method))
		return
	}
	// Marshalling two strings cannot fail.
	body, _ := json.Marshal(struct {
		Status  string `json:"status"`
		Message string `json:"message"`
	}{"healthy", "peeklock is serving namespace " + h.eng.Namespace()})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}

// now returns the current time as the Atom documents write it: to the
// second.
func (h *handler) now() atom.Time { return atom.Time{Time: h.clock.Now().UTC().Truncate(time.Second)} }

// entryID returns the id and self link of a resource.
func (h *handler) entryID(r *http.Request, path string) string {
	return "https://" + h.hostOf(r) + "/" + path
}

// entry wraps a description in an Atom entry.
func (h *handler) entry(r *http.Request, path, title string, c atom.Content) atom.Entry {
	now := h.now()
	id := h.entryID(r, path)
	c.Type = atom.ContentTypeXML
	return atom.Entry{
		ID:        id,
		Title:     &atom.Text{Type: "text", Text: title},
		Published: &now,
		Updated:   &now,
		Author:    &atom.Author{Name: h.eng.Namespace()},
		Link:      &atom.Link{Rel: "self", Href: id},
		Content:   &c,
	}
}

// writeXML answers with a document.
func (h *handler) writeXML(w http.ResponseWriter, r *http.Request, status int, contentType string, doc any) {
	body, err := atom.Marshal(doc)
	if err != nil {
		h.writeError(w, r, r.URL.Path, broker.Errorf(broker.CodeUnknown, "cannot encode the answer: %v", err))
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// namespaceInfo describes the namespace. The engine keeps no creation time;
// CreatedTime and ModifiedTime are when this handler was made.
func (h *handler) namespaceInfo(w http.ResponseWriter, r *http.Request) {
	t := atom.Time{Time: h.started.Truncate(time.Second)}
	ns := &atom.NamespaceInfo{
		CreatedTime:   t,
		MessagingSKU:  "Standard",
		ModifiedTime:  t,
		Name:          h.eng.Namespace(),
		NamespaceType: "Messaging",
	}
	h.writeXML(w, r, http.StatusOK, atom.ContentTypeEntry, h.entry(r, "$namespaceinfo", h.eng.Namespace(), atom.Content{Namespace: ns}))
}
