package amqpserver

import (
	"strings"

	"github.com/peeklock/peeklock/broker/sbamqp"
)

// nodeKind says what an address names.
type nodeKind uint8

const (
	nodeEntity     nodeKind = iota // a queue, topic, subscription or one of their sub-queues
	nodeCBS                        // the claims-based security node
	nodeManagement                 // an entity's $management node
)

// normalizeAddress strips a scheme and host ("amqps://ns.servicebus.windows.net/q"
// is "q") and surrounding slashes.
func normalizeAddress(a string) string {
	if i := strings.Index(a, "://"); i >= 0 {
		rest := a[i+3:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			a = rest[j+1:]
		} else {
			a = ""
		}
	}
	return strings.Trim(a, "/")
}

// classify says what a normalized address names and returns the entity
// address it concerns ("" for $cbs): for "q/$management", "q".
func classify(addr string) (nodeKind, string) {
	if strings.EqualFold(addr, sbamqp.CBSAddress) {
		return nodeCBS, ""
	}
	if n := len(addr) - len(sbamqp.ManagementSuffix); n > 0 && strings.EqualFold(addr[n:], sbamqp.ManagementSuffix) {
		return nodeManagement, addr[:n]
	}
	return nodeEntity, addr
}
