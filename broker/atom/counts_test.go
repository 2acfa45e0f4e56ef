package atom

import (
	"encoding/xml"
	"testing"
)

// TestCountDetailsPrefixed pins the form of CountDetails that the
// JavaScript SDK's admin client can read (one xmlns:d2p1 on CountDetails,
// prefixed children) and checks that a namespace-aware reader gets the
// same counts back, and one that declares another prefix too.
func TestCountDetailsPrefixed(t *testing.T) {
	type wrapper struct {
		XMLName      xml.Name     `xml:"QueueDescription"`
		CountDetails CountDetails `xml:"CountDetails"`
	}
	in := wrapper{CountDetails: CountDetails{ActiveMessageCount: 1, DeadLetterMessageCount: 2, ScheduledMessageCount: 3,
		TransferMessageCount: 4, TransferDeadLetterMessageCount: 5}}
	b, err := xml.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `<QueueDescription><CountDetails xmlns:d2p1="http://schemas.microsoft.com/netservices/2011/06/servicebus">` +
		`<d2p1:ActiveMessageCount>1</d2p1:ActiveMessageCount><d2p1:DeadLetterMessageCount>2</d2p1:DeadLetterMessageCount>` +
		`<d2p1:ScheduledMessageCount>3</d2p1:ScheduledMessageCount><d2p1:TransferMessageCount>4</d2p1:TransferMessageCount>` +
		`<d2p1:TransferDeadLetterMessageCount>5</d2p1:TransferDeadLetterMessageCount></CountDetails></QueueDescription>`
	if string(b) != want {
		t.Fatalf("marshalled\n%s\nwant\n%s", b, want)
	}
	for _, doc := range []string{want, `<QueueDescription><CountDetails xmlns:x="` + NSCounts + `"><x:ActiveMessageCount>1</x:ActiveMessageCount>` +
		`<x:DeadLetterMessageCount>2</x:DeadLetterMessageCount><ScheduledMessageCount xmlns="` + NSCounts + `">3</ScheduledMessageCount>` +
		`<x:TransferMessageCount>4</x:TransferMessageCount><x:TransferDeadLetterMessageCount>5</x:TransferDeadLetterMessageCount></CountDetails></QueueDescription>`} {
		var out wrapper
		if err := xml.Unmarshal([]byte(doc), &out); err != nil {
			t.Fatal(err)
		}
		if out.CountDetails != in.CountDetails {
			t.Fatalf("read back %+v, want %+v", out.CountDetails, in.CountDetails)
		}
	}
}
