package sbamqp

import (
	"net/http"
	"testing"

	"github.com/peeklock/peeklock/broker"
)

// allCodes returns every broker.Code: the codes up to the first that has no
// name of its own.
func allCodes() []broker.Code {
	codes := []broker.Code{broker.CodeUnknown}
	for c := broker.Code(1); c.String() != broker.CodeUnknown.String(); c++ {
		codes = append(codes, c)
	}
	return codes
}

// wireLosses are the codes that do not come back as themselves from the
// wire, with what they come back as: Service Bus has no condition for
// them, and the listener never answers with them (they are the
// dashboard's and the client's own).
var wireLosses = map[broker.Code]broker.Code{
	broker.CodeClosed:         broker.CodeUnknown,      // an engine closed under the listener is its internal error
	broker.CodeConnectionLost: broker.CodeUnknown,      // the client's own: the connection is what dropped
	broker.CodeReadOnly:       broker.CodeUnauthorized, // the SSH server's read-only sessions, not the wire
}

// Every code goes to the wire and back through the two tables as itself
// (or as wireLosses says), by its condition and, where a response carries
// no condition, by its status.
func TestCodesRoundTrip(t *testing.T) {
	for _, code := range allCodes() {
		want := code
		if w, ok := wireLosses[code]; ok {
			want = w
		}
		w := WireOf(code)
		got, known := CodeOfCondition(w.Condition)
		if !known || got != want {
			t.Errorf("%v travels as %s and comes back as %v (known %v), want %v", code, w.Condition, got, known, want)
		}
		if w.Status < http.StatusBadRequest {
			t.Errorf("%v travels with status %d, not an error", code, w.Status)
		}
	}
}

// A status without a condition names the code of the status's first
// owner, and 500 names none.
func TestCodeOfStatus(t *testing.T) {
	for status, want := range map[int]broker.Code{
		http.StatusGone: broker.CodeLockLost, http.StatusNotFound: broker.CodeNotFound,
		http.StatusServiceUnavailable: broker.CodeServerBusy,
	} {
		if got, ok := CodeOfStatus(status); !ok || got != want {
			t.Errorf("status %d: %v %v, want %v", status, got, ok, want)
		}
	}
	if got, ok := CodeOfStatus(http.StatusInternalServerError); ok || got != broker.CodeUnknown {
		t.Errorf("status 500: %v %v", got, ok)
	}
}
