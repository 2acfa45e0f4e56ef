package sas

import (
	"errors"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

func TestParseRights(t *testing.T) {
	for in, want := range map[string]Rights{
		"Listen": Listen, "send": Send, "Send,Listen": Send | Listen, " listen , SEND ": Send | Listen,
		"Manage": AllRights, "Manage,Send,Listen": AllRights,
	} {
		got, err := ParseRights(in)
		if err != nil || got != want {
			t.Errorf("ParseRights(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "Read", "Send,", "Send,Own"} {
		var ue *UnknownRightError
		if _, err := ParseRights(bad); !errors.As(err, &ue) {
			t.Errorf("ParseRights(%q) = %v; want an UnknownRightError", bad, err)
		}
	}
	if s := (Send | Listen).String(); s != "Send,Listen" {
		t.Errorf("String = %q", s)
	}
}

func TestValidatorRights(t *testing.T) {
	clock := clockwork.NewFakeClock()
	v := NewValidator(map[string]string{"all": "a", "send": "s"}, clock).WithRights(map[string]Rights{"send": Send})
	for name, want := range map[string]Rights{"all": AllRights, "send": Send} {
		key := map[string]string{"all": "a", "send": "s"}[name]
		tok, err := v.Validate(Sign("sb://h/q", name, key, clock.Now().Add(time.Hour)))
		if err != nil || tok.Rights != want {
			t.Errorf("key %s: rights %v, %v; want %v", name, tok, err, want)
		}
	}
}
