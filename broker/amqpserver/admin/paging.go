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
