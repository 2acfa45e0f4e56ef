package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/peeklock/peeklock/broker"
)

// checkEndpoint makes sure, before any screen opens or any work starts, that
// the endpoint accepts the credential and that entity (a path or a
// sub-queue's address; "" for none) exists. A credential the endpoint
// refuses and an unknown entity are the user's to fix (exit 2, the unknown
// entity with the closest names); anything else failed at run time.
func checkEndpoint(ctx context.Context, c broker.Client, entity string) error {
	list, err := c.Entities(ctx)
	if err != nil {
		return endpointError(err)
	}
	if entity == "" {
		return nil
	}
	path, _ := broker.SplitAddress(entity)
	if _, notice := broker.StatusOf(c); notice != "" {
		// The list is what the command line named, not what the endpoint
		// has: ask the entity itself.
		return probeEntity(ctx, c, path)
	}
	for _, e := range list {
		if strings.EqualFold(e.Path, path) {
			return nil
		}
	}
	return unknownEntity(path, list)
}

// probeEntity peeks at one message of path, where the endpoint can peek,
// to learn whether it exists and the credential may use it.
func probeEntity(ctx context.Context, c broker.Client, path string) error {
	if !c.Capabilities().Supports(broker.CanBrowse) {
		return nil
	}
	_, err := c.Browse(ctx, broker.BrowseRequest{Entity: path, Category: broker.CategoryActive, Max: 1})
	var be *broker.Error
	if errors.As(err, &be) && be.Code == broker.CodeNotFound {
		return usagef("unknown entity %q: %s", path, be.Message)
	}
	if err != nil {
		return endpointError(err)
	}
	return nil
}

// endpointError classifies an error of the first request to an endpoint:
// a refused credential and a certificate this machine does not trust are
// the user's to fix (exit 2, with the fix); a dropped connection is one
// that never existed (nothing was "lost"); anything else failed at run
// time.
func endpointError(err error) error {
	var be *broker.Error
	if errors.As(err, &be) && be.Code == broker.CodeUnauthorized {
		return usagef("the endpoint refused the credential: %v", err)
	}
	if cause := untrusted(err); cause != nil {
		return usagef("the endpoint's TLS certificate is not trusted (%v): trust the CA that signed it, "+
			"e.g. SSL_CERT_FILE=CA.pem peeklock … (peeklock serve names its CA file when it starts; "+
			"a serve on this machine is trusted by itself while it runs)", cause)
	}
	if errors.As(err, &be) && be.Code == broker.CodeConnectionLost {
		return fmt.Errorf("cannot reach the endpoint: %s", be.Message)
	}
	return err
}

// untrusted returns the certificate verification failure in err, if any.
func untrusted(err error) error {
	var unknown x509.UnknownAuthorityError
	if errors.As(err, &unknown) {
		return unknown
	}
	var invalid x509.CertificateInvalidError
	if errors.As(err, &invalid) {
		return invalid
	}
	var host x509.HostnameError
	if errors.As(err, &host) {
		return host
	}
	var verify *tls.CertificateVerificationError
	if errors.As(err, &verify) {
		return verify
	}
	return nil
}

// unknownEntity is the error of an entity name that is not in list, with
// the closest names.
func unknownEntity(name string, list []broker.Entity) error {
	names := make([]string, 0, len(list))
	for _, e := range list {
		names = append(names, e.Path)
	}
	msg := fmt.Sprintf("unknown entity %q", name)
	if near := closest(name, names, 3); len(near) > 0 {
		msg += "; did you mean " + quoteList(near) + "?"
	} else if len(names) == 0 {
		msg += "; the endpoint has no entities"
	} else if len(names) <= 8 {
		sort.Strings(names)
		msg += "; the entities are " + quoteList(names)
	}
	return usageError{msg}
}

// quoteList renders ["a", "b", "c"] as `"a", "b" or "c"`.
func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return joinList(q, "or")
}

// joinList renders ["a", "b", "c"] as "a, b <word> c".
func joinList(s []string, word string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " " + word + " " + s[len(s)-1]
}

// closest returns at most n of names nearest to name (case-insensitive
// edit distance; a name that contains the other counts as near), nearest
// first, leaving out the ones too far to be a typo.
func closest(name string, names []string, n int) []string {
	type cand struct {
		name string
		d    int
	}
	lname := strings.ToLower(name)
	var cs []cand
	for _, v := range names {
		lv := strings.ToLower(v)
		d := editDistance(lname, lv)
		limit := max(2, len([]rune(name))/3)
		if d > limit && !strings.Contains(lv, lname) && !strings.Contains(lname, lv) {
			continue
		}
		cs = append(cs, cand{v, d})
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, c.name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
