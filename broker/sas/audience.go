package sas

import (
	"net"
	"net/url"
	"strings"
)

// Covers reports whether a token issued for audience grants access to
// resource: both name the same host, and the audience's path is the
// resource's path or a prefix of it that ends at a segment boundary. So
// "sb://host/queue" covers "sb://host/queue", "sb://host/queue/$management"
// and "sb://host/queue/$DeadLetterQueue" but not "sb://host/queue2", and the
// namespace root "sb://host" covers every entity of the namespace.
//
// The comparison ignores case, the scheme (sb, amqp, amqps, http, https),
// the port (one namespace answers AMQP and HTTP on different ports), a query
// string or fragment (the admin client signs the whole request URL, with
// its api-version), and empty path segments such as trailing slashes.
func Covers(audience, resource string) bool {
	ah, ap := splitURI(audience)
	rh, rp := splitURI(resource)
	if ah == "" || ah != rh || len(ap) > len(rp) {
		return false
	}
	for i := range ap {
		if ap[i] != rp[i] {
			return false
		}
	}
	return true
}

// splitURI returns the lower-case host (without port) and path segments of
// a URI, with or without a scheme.
func splitURI(u string) (host string, segments []string) {
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	}
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	host, path, _ := strings.Cut(u, "/")
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if p, err := url.PathUnescape(path); err == nil {
		path = p
	}
	for _, s := range strings.Split(strings.ToLower(path), "/") {
		if s != "" {
			segments = append(segments, s)
		}
	}
	return host, segments
}
