package admin

import (
	"encoding/xml"
	"testing"
)

// TestCountDetailsPrefixed pins the form of CountDetails that the
// JavaScript SDK's admin client can read (one xmlns:PREFIX on CountDetails,
// prefixed children) and checks that a namespace-aware reader gets the
// same counts back.
func TestCountDetailsPrefixed(t *testing.T) {
	type wrapper struct {
		XMLName      xml.Name        `xml:"QueueDescription"`
		CountDetails countDetailsXML `xml:"CountDetails"`
	}
	in := wrapper{CountDetails: countDetailsXML{Active: 1, DeadLetter: 2, Scheduled: 3, Transfer: 4, TransferDeadLetter: 5}}
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
	var out wrapper
	if err := xml.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.CountDetails != in.CountDetails {
		t.Fatalf("read back %+v, want %+v", out.CountDetails, in.CountDetails)
	}
}
