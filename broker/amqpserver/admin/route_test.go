package admin

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

func TestParseRoute(t *testing.T) {
	tests := []struct {
		path string
		want route
		err  bool
	}{
		{"$Resources/Queues", route{kind: routeQueues}, false},
		{"$resources/topics", route{kind: routeTopics}, false},
		{"$namespaceinfo", route{kind: routeNamespace}, false},
		{"orders", route{kind: routeEntity, path: "orders"}, false},
		{"a/b/c", route{kind: routeEntity, path: "a/b/c"}, false},
		{"t/Subscriptions", route{kind: routeSubscriptions, topic: "t"}, false},
		{"a/b/subscriptions", route{kind: routeSubscriptions, topic: "a/b"}, false},
		{"t/Subscriptions/s", route{kind: routeSubscription, path: "t/Subscriptions/s", topic: "t", sub: "s"}, false},
		{"t/Subscriptions/s/Rules", route{kind: routeRules, path: "t/Subscriptions/s", topic: "t", sub: "s"}, false},
		{"t/Subscriptions/s/rules/r1", route{kind: routeRule, path: "t/Subscriptions/s", topic: "t", sub: "s", rule: "r1"}, false},
		{"", route{}, true},
		{"t/Subscriptions/s/Rules/", route{}, true},
		{"t/Subscriptions/s/Other", route{}, true},
		{"t/Subscriptions/s/Rules/r/x", route{}, true},
	}
	for _, tc := range tests {
		got, err := parseRoute(tc.path)
		if tc.err {
			if !errors.Is(err, broker.ErrNotFound) {
				t.Errorf("parseRoute(%q) = %+v, %v; want ErrNotFound", tc.path, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseRoute(%q) = %+v, %v; want %+v", tc.path, got, err, tc.want)
		}
	}
}

// TestPropertyValues round-trips correlation filter property values through
// their XML Schema form.
func TestPropertyValues(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 600, time.UTC)
	tests := []struct {
		in       any
		typ, txt string
		out      any
	}{
		{"eu", "string", "eu", "eu"},
		{true, "boolean", "true", true},
		{int32(-7), "int", "-7", int64(-7)},
		{int64(1) << 40, "long", "1099511627776", int64(1) << 40},
		{2.5, "double", "2.5", 2.5},
		{at, "dateTime", "2025-01-02T03:04:05.0000006Z", at},
		{90 * time.Second, "duration", "PT1M30S", 90 * time.Second},
		{[]byte{1, 2}, "base64Binary", "AQI=", []byte{1, 2}},
	}
	for _, tc := range tests {
		typ, txt := xmlValue(tc.in)
		if typ != tc.typ || txt != tc.txt {
			t.Errorf("xmlValue(%v) = %s %q, want %s %q", tc.in, typ, txt, tc.typ, tc.txt)
			continue
		}
		out, err := propertyValue(typ, txt)
		if err != nil || !reflect.DeepEqual(out, tc.out) {
			t.Errorf("propertyValue(%s, %q) = %#v, %v; want %#v", typ, txt, out, err, tc.out)
		}
	}
	if _, err := propertyValue("int", "x"); err == nil || err.Error() != `"x" is not a valid int` {
		t.Errorf("bad int: %v", err)
	}
	if _, err := propertyValue("QName", "x"); err == nil || err.Error() != `the type "QName" is not supported` {
		t.Errorf("unknown type: %v", err)
	}
}
