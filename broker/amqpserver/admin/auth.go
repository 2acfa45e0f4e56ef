package admin

import (
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/peeklock/peeklock/broker/sas"
)

// Headers that carry the tokens for forwarding targets.
const (
	headerForwardAuth    = "ServiceBusSupplementaryAuthorization"
	headerForwardDLQAuth = "ServiceBusDlqSupplementaryAuthorization"
)

// resourceURIs returns the URIs of a path under every host name the
// namespace answers to.
func (h *handler) resourceURIs(r *http.Request, path string) []string {
	uris := []string{"sb://" + r.Host + "/" + path}
	if h.host != "" && !strings.EqualFold(h.host, r.Host) {
		uris = append(uris, "sb://"+h.host+"/"+path)
	}
	return uris
}

// covers reports whether tok covers path under one of the namespace's host
// names.
func (h *handler) covers(r *http.Request, tok *sas.Token, path string) bool {
	for _, uri := range h.resourceURIs(r, path) {
		if sas.Covers(tok.Audience, uri) {
			return true
		}
	}
	return false
}

// authorize checks the Authorization header: a valid token that covers
// the path.
func (h *handler) authorize(r *http.Request, path string) (*sas.Token, error) {
	header := r.Header.Get("Authorization")
	if header == "" {
		return nil, unauthorized("the request has no Authorization header; send a SharedAccessSignature token")
	}
	tok, err := h.validate(r, header)
	if err != nil {
		return nil, err
	}
	if !h.covers(r, tok, path) {
		return nil, sas.NotCovered(tok.Audience, h.resourceURIs(r, path)[0])
	}
	return tok, nil
}

// authorizeForward checks that the client may forward to target (an entity
// path; raw is the setting as the client wrote it): the request's token
// covers it, or the token in the supplementary header does. The Go SDK
// signs that token for the raw setting, which may be a bare entity name.
func (h *handler) authorizeForward(r *http.Request, main *sas.Token, header, setting, raw, target string) error {
	if target == "" || h.covers(r, main, target) {
		return nil
	}
	value := r.Header.Get(header)
	if value == "" {
		return unauthorized("%s names %q, which the request's token does not cover; send a token for it in the %s header",
			setting, target, header)
	}
	tok, err := h.validate(r, value)
	if err != nil {
		return unauthorized("the %s header: %s", header, errMessage(err))
	}
	if h.covers(r, tok, target) || strings.EqualFold(strings.Trim(tok.Audience, "/"), strings.Trim(strings.TrimSpace(raw), "/")) {
		return nil
	}
	return unauthorized("the token in the %s header is for %q and does not cover %s target %q", header, tok.Audience, setting, target)
}

// validate checks the value of an authorization header: a shared access
// signature, or with Options.EntraID an Entra ID token ("Bearer TOKEN" or
// the bare token), which grants its rights on the whole namespace.
func (h *handler) validate(r *http.Request, value string) (*sas.Token, error) {
	value = strings.TrimSpace(value)
	if h.entra == nil || strings.HasPrefix(value, "SharedAccessSignature") {
		return h.auth.Validate(value)
	}
	if len(value) > len("Bearer ") && strings.EqualFold(value[:len("Bearer ")], "Bearer ") {
		value = strings.TrimSpace(value[len("Bearer "):])
	}
	if strings.ContainsAny(value, " \t") {
		// Another scheme ("Basic …"): not a token, opaque or not.
		scheme, _, _ := strings.Cut(value, " ")
		return nil, unauthorized("the Authorization header's scheme %q is not supported; send a SharedAccessSignature or a Bearer token", clipScheme(scheme))
	}
	id, err := h.entra.Validate(value, []string{r.Host, h.host}, time.Time{})
	if err != nil {
		return nil, err
	}
	host := r.Host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		host = hh
	}
	return &sas.Token{Audience: "sb://" + host + "/", Expiry: id.Expires, KeyName: "Entra ID " + id.Subject, Rights: id.Rights}, nil
}

// clipScheme shortens an unknown authorization scheme for a message.
func clipScheme(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}
