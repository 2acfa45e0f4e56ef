package admin

import (
	"net/url"
	"strconv"

	"github.com/peeklock/peeklock/broker"
)

// defaultPageSize is the page size of a listing without $top, as in
// Service Bus.
const defaultPageSize = 100

// page is a window of a listing: $skip and $top.
type page struct {
	skip, top int
}

// pageOf reads $skip and $top.
func pageOf(q url.Values) (page, error) {
	p := page{top: defaultPageSize}
	for _, f := range []struct {
		name string
		dst  *int
	}{{"$skip", &p.skip}, {"$top", &p.top}} {
		v := q.Get(f.name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return page{}, broker.Errorf(broker.CodeInvalid, "%s=%q is not a non-negative integer", f.name, clip(v))
		}
		*f.dst = n
	}
	return p, nil
}

// next returns the page after p when a listing of n entries goes on past
// it: Service Bus then gives a feed a next link, by which the SDKs page
// (the JavaScript SDK's byPage stops at a feed without one).
func (p page) next(n int) (page, bool) {
	if p.top == 0 || p.skip+p.top >= n {
		return page{}, false
	}
	return page{skip: p.skip + p.top, top: p.top}, true
}

// query returns the request's query q with this page's $skip and $top, for
// a next link.
func (p page) query(q url.Values) string {
	q.Set("$skip", strconv.Itoa(p.skip))
	q.Set("$top", strconv.Itoa(p.top))
	return q.Encode()
}

// window returns the page of a list.
func window[T any](list []T, p page) []T {
	if p.skip >= len(list) {
		return nil
	}
	list = list[p.skip:]
	if p.top < len(list) {
		list = list[:p.top]
	}
	return list
}

// clip shortens client text quoted in an error message.
func clip(s string) string {
	const max = 80
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
