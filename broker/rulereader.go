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

// lookThrough returns the first of c and the clients it wraps (Unwrapper,
// a few levels at most) that implements T, so that a wrapper which decides
// (the read-only one refuses, the SSH session audits) is the one called.
// With innermost, ok is true only when the client at the end of the chain,
// which wraps none, implements T too: a wrapper's own method then only
// passes the call on, and without the innermost client it has nothing to
// pass it to.
func lookThrough[T any](c Client, innermost bool) (found T, ok bool) {
	for range 8 { // wrappers nest a few levels at most
		t, is := c.(T)
		if is && !ok {
			found, ok = t, true
			if !innermost {
				return found, true
			}
		}
		u, isWrapper := c.(Unwrapper)
		if !isWrapper {
			if innermost && !is {
				var none T
				return none, false
			}
			return found, ok
		}
		c = u.Unwrap()
	}
	var none T
	return none, false
}

// RulesOf returns the RuleReader of c: c itself when it implements it, or
// else the first client that implements it down the chain of wrapped
// clients (Unwrapper). Reading rules changes nothing, so a read-only
// wrapper passes it through. ok is false when no client in the chain reads
// rules on request.
func RulesOf(c Client) (rr RuleReader, ok bool) {
	return lookThrough[RuleReader](c, false)
}
