package admin

import (
	"errors"
	"testing"

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
