package admin

import (
	"net/http"
	"strings"

	"github.com/peeklock/peeklock/broker"
)

// routeKind is what a request path names.
type routeKind uint8

const (
	routeEntity        routeKind = iota // a queue or a topic
	routeSubscription                   // one subscription
	routeSubscriptions                  // a topic's subscriptions
	routeRule                           // one rule of a subscription
	routeRules                          // a subscription's rules
	routeQueues                         // $Resources/Queues
	routeTopics                         // $Resources/Topics
	routeNamespace                      // $namespaceinfo
)

// route is a parsed request path.
type route struct {
	kind  routeKind
	path  string // entity path: queue, topic or "topic/Subscriptions/sub"
	topic string
	sub   string
	rule  string
}

// parseRoute parses a request path without its leading and trailing
// slashes.
func parseRoute(p string) (route, error) {
	switch strings.ToLower(p) {
	case "":
		return route{}, broker.Errorf(broker.CodeNotFound, "there is no resource at /; address an entity or $Resources/Queues or $Resources/Topics")
	case "$resources/queues":
		return route{kind: routeQueues}, nil
	case "$resources/topics":
		return route{kind: routeTopics}, nil
	case "$namespaceinfo":
		return route{kind: routeNamespace}, nil
	}
	segs := strings.Split(p, "/")
	i := 1
	for i < len(segs) && !strings.EqualFold(segs[i], "Subscriptions") {
		i++
	}
	if i == len(segs) {
		return route{kind: routeEntity, path: p}, nil
	}
	rt := route{topic: strings.Join(segs[:i], "/")}
	rest := segs[i+1:]
	if len(rest) == 0 {
		rt.kind = routeSubscriptions
		return rt, nil
	}
	rt.sub = rest[0]
	rt.path = broker.SubscriptionPath(rt.topic, rt.sub)
	switch {
	case len(rest) == 1:
		rt.kind = routeSubscription
	case len(rest) == 2 && strings.EqualFold(rest[1], "Rules"):
		rt.kind = routeRules
	case len(rest) == 3 && strings.EqualFold(rest[1], "Rules") && rest[2] != "":
		rt.kind, rt.rule = routeRule, rest[2]
	default:
		return route{}, broker.Errorf(broker.CodeNotFound, "there is no resource at /%s", p)
	}
	return rt, nil
}

// allow lists the methods a route answers.
func (rt route) allow() string {
	switch rt.kind {
	case routeEntity, routeSubscription, routeRule:
		return "GET, PUT, DELETE"
	}
	return "GET"
}

// allows reports whether the route answers method.
func (rt route) allows(method string) bool {
	switch method {
	case http.MethodGet:
		return true
	case http.MethodPut, http.MethodDelete:
		return rt.allow() != "GET"
	}
	return false
}
