package admin

import (
	"encoding/xml"
	"net/url"
	"testing"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/atom"
)

// A listing that goes on past its page has a next link with the next
// $skip, as Service Bus's feeds do; the last page has none. The JavaScript
// SDK's byPage follows it.
func TestFeedNextLink(t *testing.T) {
	f := newFixture(t)
	f.create(broker.Entity{Path: "a"}, broker.Entity{Path: "b"}, broker.Entity{Path: "c"},
		broker.Entity{Path: "t", Kind: broker.KindTopic}, broker.Entity{Path: "t/Subscriptions/s", Kind: broker.KindSubscription})
	root := "sb://" + f.host
	next := func(path string) (entries int, skip, top string) {
		t.Helper()
		status, body, _ := f.do("GET", path, root+"/", "", nil)
		if status != 200 {
			t.Fatalf("GET %s: %d %s", path, status, body)
		}
		var feed atom.Feed
		if err := xml.Unmarshal([]byte(body), &feed); err != nil {
			t.Fatalf("GET %s: %v\n%s", path, err, body)
		}
		for _, l := range feed.Links {
			if l.Rel == "next" {
				u, err := url.Parse(l.Href)
				if err != nil {
					t.Fatalf("next link %q: %v", l.Href, err)
				}
				return len(feed.Entries), u.Query().Get("$skip"), u.Query().Get("$top")
			}
		}
		return len(feed.Entries), "", ""
	}
	for _, tc := range []struct {
		path      string
		entries   int
		skip, top string
	}{
		{"/$Resources/Queues?$top=2&api-version=2021-05", 2, "2", "2"},
		{"/$Resources/Queues?$skip=2&$top=2&api-version=2021-05", 1, "", ""},
		{"/$Resources/Queues?$top=3", 3, "", ""},
		{"/$Resources/Queues?$top=1", 1, "1", "1"},
		{"/$Resources/Queues?$top=0", 0, "", ""},
		{"/t/Subscriptions/s/Rules?$top=1", 1, "", ""},
	} {
		n, skip, top := next(tc.path)
		if n != tc.entries || skip != tc.skip || top != tc.top {
			t.Errorf("GET %s: %d entries, next $skip=%q $top=%q; want %d, %q, %q", tc.path, n, skip, top, tc.entries, tc.skip, tc.top)
		}
	}
}
