package atom

import (
	"encoding/xml"
	"errors"
	"testing"
	"time"
)

// TestScalars reads booleans, integers and times as XML Schema writes
// them, around white space, and refuses anything else with a *ValueError
// that names the element.
func TestScalars(t *testing.T) {
	type doc struct {
		B *Bool `xml:"B"`
		N *Int  `xml:"N"`
		T *Time `xml:"T"`
	}
	for _, tc := range []struct {
		in   string
		b    bool
		n    int64
		when time.Time
		err  string
	}{
		{in: `<d><B> true </B><N> -12 </N><T>2024-05-06T07:08:09.1234567Z</T></d>`, b: true, n: -12, when: time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC)},
		{in: `<d><B>1</B><T>2024-05-06T09:08:09+02:00</T></d>`, b: true, when: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)},
		{in: `<d><B>0</B><T>0001-01-01T00:00:00</T></d>`},
		{in: `<d><B>false</B><T></T></d>`},
		{in: `<d><B>True</B></d>`, err: `B: "True" is not a boolean (true or false)`},
		{in: `<d><B>yes</B></d>`, err: `B: "yes" is not a boolean (true or false)`},
		{in: `<d><N>1.5</N></d>`, err: `N: "1.5" is not an integer`},
		{in: `<d><N></N></d>`, err: `N: "" is not an integer`},
		{in: `<d><N>99999999999999999999</N></d>`, err: `N: "99999999999999999999" is not an integer`},
		{in: `<d><T>yesterday</T></d>`, err: `T: "yesterday" is not an RFC 3339 time`},
		{in: `<d><T>2024-05-06T07:08:09</T></d>`, err: `T: "2024-05-06T07:08:09" is not an RFC 3339 time`},
	} {
		var d doc
		err := xml.Unmarshal([]byte(tc.in), &d)
		if tc.err != "" {
			var ve *ValueError
			if !errors.As(err, &ve) || err.Error() != tc.err {
				t.Errorf("%s: %v, want the *ValueError %s", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || bool(*d.B) != tc.b || d.N != nil && int64(*d.N) != tc.n || d.T != nil && !d.T.Equal(tc.when) ||
			d.T != nil && !d.T.IsZero() && d.T.Location() != time.UTC {
			t.Errorf("%s: %+v, %v", tc.in, d, err)
		}
	}
}

// TestFormatTime writes times in UTC with the fraction they have, and the
// zero time as Service Bus does.
func TestFormatTime(t *testing.T) {
	for tm, want := range map[time.Time]string{
		{}: ZeroTime,
		time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC):                               "2024-05-06T07:08:09Z",
		time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC):                       "2024-05-06T07:08:09.1234567Z",
		time.Date(2024, 5, 6, 9, 8, 9, 500000000, time.FixedZone("CEST", 2*3600)): "2024-05-06T07:08:09.5Z",
	} {
		if got := FormatTime(tm); got != want {
			t.Errorf("FormatTime(%v) = %q, want %q", tm, got, want)
		}
		if back, err := ParseTime(want); err != nil || !back.Equal(tm) {
			t.Errorf("ParseTime(%q) = %v, %v", want, back, err)
		}
	}
}

// TestValueErrorPaths: a malformed value names its element's path from
// the description, through rules, filters and authorization rules.
func TestValueErrorPaths(t *testing.T) {
	entry := func(desc string) string {
		return `<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml">` + desc + `</content></entry>`
	}
	for in, want := range map[string]string{
		entry(`<QueueDescription><LockDuration>30 seconds</LockDuration></QueueDescription>`):                                                                                                                                 `QueueDescription.LockDuration: "30 seconds" is not an ISO 8601 duration such as PT30S, PT1H30M or P1D: it must start with P`,
		entry(`<QueueDescription><MaxDeliveryCount>ten</MaxDeliveryCount></QueueDescription>`):                                                                                                                                `QueueDescription.MaxDeliveryCount: "ten" is not an integer`,
		entry(`<TopicDescription><EnablePartitioning>16</EnablePartitioning></TopicDescription>`):                                                                                                                             `TopicDescription.EnablePartitioning: "16" is not a boolean (true or false)`,
		entry(`<QueueDescription><AuthorizationRules><AuthorizationRule><KeyName>a</KeyName></AuthorizationRule><AuthorizationRule><CreatedTime>x</CreatedTime></AuthorizationRule></AuthorizationRules></QueueDescription>`): `QueueDescription.AuthorizationRules[1].CreatedTime: "x" is not an RFC 3339 time`,
		entry(`<SubscriptionDescription><DefaultRuleDescription><Filter><CompatibilityLevel>x</CompatibilityLevel></Filter></DefaultRuleDescription></SubscriptionDescription>`):                                              `SubscriptionDescription.DefaultRuleDescription.Filter.CompatibilityLevel: "x" is not an integer`,
		entry(`<RuleDescription><Action><CompatibilityLevel>x</CompatibilityLevel></Action></RuleDescription>`):                                                                                                               `RuleDescription.Action.CompatibilityLevel: "x" is not an integer`,
		entry(`<QueueDescription><CountDetails><d2p1:ActiveMessageCount xmlns:d2p1="` + NSCounts + `">-</d2p1:ActiveMessageCount></CountDetails></QueueDescription>`):                                                         `QueueDescription.CountDetails.ActiveMessageCount: "-" is not an integer`,
	} {
		var e Entry
		err := xml.Unmarshal([]byte(in), &e)
		var ve *ValueError
		if !errors.As(err, &ve) || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", in, err, want)
		}
	}
}
