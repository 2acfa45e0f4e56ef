package admin

import (
	"net/http"
	"strings"

	"github.com/peeklock/peeklock/broker/amqpserver/sas"
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
	tok, err := h.auth.Validate(header)
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
	tok, err := h.auth.Validate(value)
	if err != nil {
		return unauthorized("the %s header: %s", header, errMessage(err))
	}
	if h.covers(r, tok, target) || strings.EqualFold(strings.Trim(tok.Audience, "/"), strings.Trim(strings.TrimSpace(raw), "/")) {
		return nil
	}
	return unauthorized("the token in the %s header is for %q and does not cover %s target %q", header, tok.Audience, setting, target)
}
