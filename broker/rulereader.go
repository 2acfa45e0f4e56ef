package broker

import "context"

// RuleReader is implemented by clients whose Entities leaves Entity.Rules
// empty for subscriptions because reading them costs a request per
// subscription (remote endpoints, through the admin API). The dashboard
// reads a subscription's rules through it when they are asked for, not on
// every poll. The embedded engine does not implement it: its Entities
// carries every subscription's rules. Use RulesOf to find out whether a
// client has it.
type RuleReader interface {
	// SubscriptionRules returns the rules of the subscription at path
	// ("topic/Subscriptions/name") in the endpoint's order, as the endpoint
	// lists them (Service Bus lists the $Default TrueFilter of a
	// subscription that takes every message; no rule at all means the
	// subscription gets nothing). It fails with CodeNotSupported when the
	// endpoint has no admin API, CodeUnauthorized when the credential may
	// not read it, and CodeNotFound when there is no such subscription.
	SubscriptionRules(ctx context.Context, path string) ([]Rule, error)
}

// Unwrapper is implemented by clients that wrap another one (ReadOnly, the
// SSH server's per-session client) and pass reading through to it.
type Unwrapper interface {
	// Unwrap returns the wrapped client.
	Unwrap() Client
}

// RulesOf returns the RuleReader of c: c itself when it implements it, or
// else the first client that implements it down the chain of wrapped
// clients (Unwrapper). Reading rules changes nothing, so a read-only
// wrapper passes it through. ok is false when no client in the chain reads
// rules on request.
func RulesOf(c Client) (rr RuleReader, ok bool) {
	for range 8 { // wrappers nest a few levels at most
		if rr, ok = c.(RuleReader); ok {
			return rr, true
		}
		u, isWrapper := c.(Unwrapper)
		if !isWrapper {
			return nil, false
		}
		c = u.Unwrap()
	}
	return nil, false
}
