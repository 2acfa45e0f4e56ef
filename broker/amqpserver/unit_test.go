package amqpserver

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
)

func TestConditionTable(t *testing.T) {
	for _, tc := range []struct {
		err    error
		cond   wire.Symbol
		status int32
	}{
		{broker.ErrLockLost, "com.microsoft:message-lock-lost", http.StatusGone},
		{broker.ErrSessionLockLost, "com.microsoft:session-lock-lost", http.StatusGone},
		{broker.ErrSessionCannotLock, "com.microsoft:session-cannot-be-locked", http.StatusConflict},
		{broker.ErrNotFound, "amqp:not-found", http.StatusNotFound},
		{broker.ErrMessageNotFound, "com.microsoft:message-not-found", http.StatusNotFound},
		{broker.ErrQuotaExceeded, "amqp:resource-limit-exceeded", http.StatusForbidden},
		{broker.ErrMessageTooLarge, "amqp:link:message-size-exceeded", http.StatusRequestEntityTooLarge},
		{broker.ErrUnauthorized, "amqp:unauthorized-access", http.StatusUnauthorized},
		{broker.ErrServerBusy, "com.microsoft:server-busy", http.StatusServiceUnavailable},
		{broker.ErrTimeout, "com.microsoft:timeout", http.StatusRequestTimeout},
		{broker.ErrInvalid, "amqp:invalid-field", http.StatusBadRequest},
		{broker.ErrClosed, "amqp:internal-error", http.StatusInternalServerError},
		{errors.New("plain"), "amqp:internal-error", http.StatusInternalServerError},
		{errors.Join(errors.New("wrapped"), broker.ErrLockLost), "com.microsoft:message-lock-lost", http.StatusGone},
	} {
		got := conditionOf(tc.err)
		if got.cond != tc.cond || got.status != tc.status {
			t.Errorf("%v: %s %d, want %s %d", tc.err, got.cond, got.status, tc.cond, tc.status)
		}
	}
}

func TestDescribeCarriesTrackingID(t *testing.T) {
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	err := &broker.Error{Code: broker.CodeLockLost, Message: "the lock expired", TrackingID: "abc_G1"}
	want := "the lock expired TrackingId:abc_G1, SystemTracker:q, Timestamp:2025-03-04T05:06:07"
	if got := describe(err, "q", now); got != want {
		t.Fatalf("describe = %q, want %q", got, want)
	}
	got := describe(broker.ErrNotFound, "q", now)
	if !strings.HasPrefix(got, "entity not found TrackingId:") || !strings.Contains(got, "_G0, SystemTracker:q,") {
		t.Fatalf("describe of a sentinel = %q", got)
	}
}

func TestAddresses(t *testing.T) {
	for in, want := range map[string]string{
		"q":                                   "q",
		"/q/":                                 "q",
		"amqps://ns.servicebus.windows.net/q": "q",
		"amqp://127.0.0.1:5672/t/Subscriptions/s/$DeadLetterQueue": "t/Subscriptions/s/$DeadLetterQueue",
		"amqp://host": "",
	} {
		if got := normalizeAddress(in); got != want {
			t.Errorf("normalizeAddress(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]struct {
		kind   nodeKind
		entity string
	}{
		"$cbs":                           {nodeCBS, ""},
		"$CBS":                           {nodeCBS, ""},
		"q/$management":                  {nodeManagement, "q"},
		"q/$DeadLetterQueue/$management": {nodeManagement, "q/$DeadLetterQueue"},
		"t/Subscriptions/s/$MANAGEMENT":  {nodeManagement, "t/Subscriptions/s"},
		"$management":                    {nodeEntity, "$management"},
		"q/$DeadLetterQueue":             {nodeEntity, "q/$DeadLetterQueue"},
	} {
		k, e := classify(in)
		if k != want.kind || e != want.entity {
			t.Errorf("classify(%q) = %d %q, want %d %q", in, k, e, want.kind, want.entity)
		}
	}
}

func TestPropertiesToModify(t *testing.T) {
	u := uuid.New()
	b := []byte("bin")
	got, err := propertiesToModify(wire.Map{
		{Key: wire.Symbol("sym"), Value: wire.Symbol("v")},
		{Key: "n", Value: int64(3)},
		{Key: "u", Value: wire.UUID(u)},
		{Key: "b", Value: b},
		{Key: "d", Value: wire.Described{Descriptor: wire.Symbol("com.microsoft:timespan"), Value: int64(15_000_000)}},
		{Key: "nil", Value: nil},
	})
	if err != nil {
		t.Fatal(err)
	}
	b[0] = 'X'
	if got["sym"] != "v" || got["n"] != int64(3) || got["u"] != u || string(got["b"].([]byte)) != "bin" ||
		got["d"] != 1500*time.Millisecond || got["nil"] != nil || len(got) != 6 {
		t.Fatalf("got %#v", got)
	}
	for name, m := range map[string]wire.Map{
		"list value": {{Key: "l", Value: []any{int64(1)}}},
		"map value":  {{Key: "m", Value: wire.Map{}}},
		"int key":    {{Key: int64(1), Value: "x"}},
	} {
		if _, err := propertiesToModify(m); broker.CodeOf(err) != broker.CodeInvalid {
			t.Errorf("%s: %v, want CodeInvalid", name, err)
		}
	}
}

func TestSettlementFor(t *testing.T) {
	tok := broker.LockToken{1}
	for name, tc := range map[string]struct {
		state wire.DeliveryState
		kind  broker.SettleKind
		reply wire.DeliveryState
	}{
		"accepted": {wire.Accepted{}, broker.Complete, wire.Accepted{}},
		"modified": {wire.Modified{}, broker.Abandon, wire.Modified{}},
		"deferred": {wire.Modified{UndeliverableHere: true}, broker.Defer, wire.Modified{UndeliverableHere: true}},
		"released": {wire.Released{}, broker.Release, wire.Released{}},
		"none":     {nil, broker.Release, wire.Released{}},
		"rejected": {wire.Rejected{Error: &wire.Error{Condition: wire.CondDeadLetter,
			Info: wire.Map{{Key: "DeadLetterReason", Value: "r"}, {Key: "DeadLetterErrorDescription", Value: "d"}, {Key: "x", Value: "y"}}}},
			broker.DeadLetter, wire.Rejected{}},
	} {
		s, reply, err := settlementFor(tc.state, "q", tok)
		if err != nil || s.Kind != tc.kind || s.Token != tok || s.Entity != "q" {
			t.Errorf("%s: %+v %v", name, s, err)
			continue
		}
		if r, ok := reply.(wire.Rejected); ok && r.Error != nil {
			t.Errorf("%s: the confirmation of a dead-lettering carries an error", name)
		}
		if name == "rejected" && (s.Reason != "r" || s.Description != "d" || len(s.PropertiesToModify) != 1 || s.PropertiesToModify["x"] != "y") {
			t.Errorf("rejected: %+v", s)
		}
		if name != "rejected" && !reflect.DeepEqual(reply, tc.reply) {
			t.Errorf("%s: reply %#v, want %#v", name, reply, tc.reply)
		}
	}
	s, _, _ := settlementFor(wire.Rejected{Error: &wire.Error{Condition: "app:oops", Description: "bad"}}, "q", tok)
	if s.Kind != broker.DeadLetter || s.Reason != "app:oops" || s.Description != "bad" {
		t.Errorf("rejected with another condition: %+v", s)
	}
	if _, _, err := settlementFor(wire.OtherState{}, "q", tok); broker.CodeOf(err) != broker.CodeNotSupported {
		t.Errorf("transactional state: %v", err)
	}
}
