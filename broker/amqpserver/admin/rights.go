package admin

import (
	"net/http"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sas"
)

// requireManage checks that a token's key has the Manage right, which every
// admin operation needs, and answers as Service Bus does when it lacks it:
// 401 with the wording each kind of resource uses (the SDKs' live tests
// check it). A queue or topic that does not exist is still 404 for a GET,
// as it is on Service Bus, so a client can tell missing from forbidden.
func (h *handler) requireManage(r *http.Request, rt route, tok *sas.Token) error {
	if tok.Rights.Has(sas.Manage) {
		return nil
	}
	switch rt.kind {
	case routeSubscription, routeSubscriptions, routeRule, routeRules:
		return broker.Errorf(broker.CodeUnauthorized,
			"401 SubCode=40100: Unauthorized : Unauthorized access for '%s' operation on endpoint %s. Tokens Claims: %s",
			subscriptionOperation(rt.kind, r.Method), h.resourceURIs(r, rt.path)[0], tok.Rights)
	case routeEntity:
		switch r.Method {
		case http.MethodPut:
			return broker.Errorf(broker.CodeUnauthorized, "Authorization failed for specified action: Manage,EntityWrite")
		case http.MethodDelete:
			return broker.Errorf(broker.CodeUnauthorized, "Authorization failed for specified action: Manage,EntityDelete")
		}
		if _, err := h.eng.Entity(r.Context(), rt.path); broker.CodeOf(err) == broker.CodeNotFound {
			return nil // the GET answers 404
		}
	}
	return broker.Errorf(broker.CodeUnauthorized, "Manage,EntityRead claims required for this operation")
}

// subscriptionOperation names the operation of a request on subscriptions
// and rules as Service Bus's errors name it.
func subscriptionOperation(kind routeKind, method string) string {
	prefix := "Subscription"
	if kind == routeRule || kind == routeRules {
		prefix = "Rule"
	}
	switch {
	case kind == routeSubscriptions:
		return "EnumerateSubscriptions"
	case kind == routeRules:
		return "EnumerateRules"
	case method == http.MethodPut:
		return "CreateOrUpdate" + prefix
	case method == http.MethodDelete:
		return "Delete" + prefix
	}
	return "Get" + prefix
}
