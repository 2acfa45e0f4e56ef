package sas

import (
	"fmt"
	"strings"

	"github.com/peeklock/peeklock/broker"
)

// Rights are the claims a shared access key grants, as a Service Bus
// authorization rule's AccessRights (broker.AccessRights, which entity-level
// rules use too): Listen (receive, peek, settle), Send (send, schedule) and
// Manage (the admin API and rules). A key given Manage gets the other two
// with it, as Service Bus requires of a rule that has it.
type Rights = broker.AccessRights

// The rights.
const (
	Listen = broker.RightListen
	Send   = broker.RightSend
	Manage = broker.RightManage
)

// AllRights is what a key without a rights list grants.
const AllRights = broker.AllRights

// UnknownRightError is the error of a rights list that names something
// other than Manage, Send or Listen.
type UnknownRightError struct{ Name string }

func (e *UnknownRightError) Error() string {
	return fmt.Sprintf("unknown right %q; the rights are Manage, Send and Listen", e.Name)
}

// ParseRights parses a comma-separated list of right names, without regard
// to case ("Manage,Send,Listen", "send", "Listen,Send"). Manage brings Send
// and Listen with it. An empty or unknown name is an *UnknownRightError.
func ParseRights(s string) (Rights, error) {
	var r Rights
	for part := range strings.SplitSeq(s, ",") {
		name := strings.TrimSpace(part)
		one, ok := broker.ParseAccessRight(name)
		if !ok {
			return 0, &UnknownRightError{Name: clip(name)}
		}
		r |= one
	}
	if r.Has(Manage) {
		r |= Send | Listen
	}
	return r, nil
}

// MissingClaim is the error of a token that covers a resource but lacks a
// right the operation needs, in Service Bus's words (the SDKs show its
// description as is).
func MissingClaim(need Rights, resource string) *broker.Error {
	return broker.Errorf(broker.CodeUnauthorized,
		"Unauthorized access. '%s' claim(s) are required to perform this operation. Resource: '%s'.", need, clip(resource))
}
