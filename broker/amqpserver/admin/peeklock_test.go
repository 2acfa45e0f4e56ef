package admin

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/peeklock/peeklock/broker"
)

// TestPeeklockReads: GET /$peeklock/history answers a stored message's
// history and /$peeklock/entities the engine's counts with the locks; both
// need a token covering the path, history refuses what is not a message,
// and other methods and paths are refused.
func TestPeeklockReads(t *testing.T) {
	f := newFixture(t)
	f.create(broker.Entity{Path: "q", Kind: broker.KindQueue})
	f.send("q", 2)
	locked := f.receive("q", 1)
	root := "sb://" + f.host + "/"

	status, body, _ := f.do("GET", "/$peeklock/history?entity=q&seq=1", root, "", nil)
	var h broker.History
	if status != http.StatusOK || json.Unmarshal([]byte(body), &h) != nil || h.Sequence != 1 || len(h.Events) != 2 || h.Events[1].Kind != broker.EventLocked {
		t.Fatalf("history: %d %s", status, body)
	}
	status, body, _ = f.do("GET", "/$peeklock/entities", root, "", nil)
	var list []broker.Entity
	if status != http.StatusOK || json.Unmarshal([]byte(body), &list) != nil || len(list) != 1 || list[0].Counts.Locked != len64(locked) || list[0].Counts.Active != 1 {
		t.Fatalf("entities: %d %s", status, body)
	}
	for _, tc := range []struct {
		method, path, auth string
		status             int
		want               string
	}{
		{"GET", "/$peeklock/history?entity=q&seq=1", "", 401, "no Authorization header"},
		{"GET", "/$peeklock/history?entity=q&seq=9", root, 404, "9"},
		{"GET", "/$peeklock/history?entity=q", root, 400, "seq=SEQUENCE-NUMBER"},
		{"PUT", "/$peeklock/entities", root, 405, "use GET"},
		{"GET", "/$peeklock/other", root, 404, "/$peeklock/history and /$peeklock/entities"},
	} {
		status, body, _ := f.do(tc.method, tc.path, tc.auth, "", nil)
		if status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%s %s: %d %s; want %d and %q", tc.method, tc.path, status, body, tc.status, tc.want)
		}
	}
}

func len64[T any](s []T) int64 { return int64(len(s)) }
