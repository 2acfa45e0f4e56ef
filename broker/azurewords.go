package broker

import (
	"fmt"
	"strings"
)

// Service Bus words a missing and an existing entity in these sentences,
// and the official SDKs and their users tell the errors by them: the
// JavaScript SDK's live tests expect a message that starts with "The
// messaging entity", and its rule manager's "The messaging entity
// '…ruleName' already exists".
const (
	notFoundSentence = "The messaging entity '%s' could not be found."
	existsSentence   = "The messaging entity '%s' already exists."
)

// NotFoundMessage is Service Bus's message for a missing entity; ref names
// it (an entity path, or EntityRef's form).
func NotFoundMessage(ref string) string { return fmt.Sprintf(notFoundSentence, ref) }

// ExistsMessage is Service Bus's message for an entity that exists
// already; ref names it as EntityRef does.
func ExistsMessage(ref string) string { return fmt.Sprintf(existsSentence, ref) }

// EntityRef names an entity as Service Bus's management errors do:
// "ns:Queue:q", "ns:Topic:t", "ns:Topic:t|s" for a subscription and
// "ns:Topic:t|s|r" for a rule (path "t/Subscriptions/s/Rules/r").
func EntityRef(namespace string, kind EntityKind, path string) string {
	if topic, rest, ok := strings.Cut(path, "/Subscriptions/"); ok {
		sub, rule, hasRule := strings.Cut(rest, "/Rules/")
		if hasRule {
			return namespace + ":Topic:" + topic + "|" + sub + "|" + rule
		}
		return namespace + ":Topic:" + topic + "|" + sub
	}
	if kind == KindTopic {
		return namespace + ":Topic:" + path
	}
	return namespace + ":Queue:" + path
}
