package sas

import (
	"fmt"
	"strings"

	"github.com/peeklock/peeklock/broker"
)

// Rights are the claims a shared access key grants, as a Service Bus
// authorization rule's AccessRights: Listen (receive, peek, settle), Send
// (send, schedule) and Manage (the admin API and rules). Manage implies the
// other two, as Service Bus requires of a rule that has it.
type Rights uint8

// The rights.
const (
	Listen Rights = 1 << iota
	Send
	Manage
)

// AllRights is what a key without a rights list grants.
const AllRights = Listen | Send | Manage

// rightNames are the names in the order Service Bus writes them.
var rightNames = [...]struct {
	r    Rights
	name string
}{{Manage, "Manage"}, {Send, "Send"}, {Listen, "Listen"}}

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
		found := false
		for _, n := range rightNames {
			if strings.EqualFold(name, n.name) {
				r |= n.r
				found = true
			}
		}
		if !found {
			return 0, &UnknownRightError{Name: clip(name)}
		}
	}
	if r&Manage != 0 {
		r |= Send | Listen
	}
	return r, nil
}

// Has reports whether r holds every right of need.
func (r Rights) Has(need Rights) bool { return r&need == need }

// String returns the rights as Service Bus lists them: "Manage,Send,Listen".
func (r Rights) String() string {
	var names []string
	for _, n := range rightNames {
		if r&n.r != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ",")
}

// MissingClaim is the error of a token that covers a resource but lacks a
// right the operation needs, in Service Bus's words (the SDKs show its
// description as is).
func MissingClaim(need Rights, resource string) *broker.Error {
	return broker.Errorf(broker.CodeUnauthorized,
		"Unauthorized access. '%s' claim(s) are required to perform this operation. Resource: '%s'.", need, clip(resource))
}
