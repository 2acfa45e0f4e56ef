package msgfilter

import (
	"context"
	"fmt"
	"testing"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

func TestParseAndMatch(t *testing.T) {
	m := &broker.Message{MessageID: "order-7", Subject: "Order.Placed", CorrelationID: "c-1", SequenceNumber: 12,
		ApplicationProperties: map[string]any{"Tenant": "acme", "count": int64(3), "DeadLetterReason": "Poison"},
		Body:                  []byte(`{"customer":"Zeta Corp"}`)}
	for _, tc := range []struct {
		filter string
		want   bool
	}{
		{"", true},
		{"messageid=order-7", true},
		{"MessageId = order-8", false},
		{"subject=Order.Placed", true},
		{"label=Order.Placed", true},
		{"seq=12", true},
		{"tenant=acme", true},  // application property names match without regard to case
		{"Tenant=ACME", false}, // values exactly
		{"count=3", true},
		{"DeadLetterReason=Poison", true},
		{"missing=x", false},
		{"zeta corp", true}, // body text, case-insensitive
		{"ORDER-7", true},
		{"poison", true}, // property values
		{"nothing like it", false},
		{"a b=c", false}, // a name with a space is text, not a comparison
	} {
		if got := Parse(tc.filter).Match(m); got != tc.want {
			t.Errorf("%q: match %v, want %v", tc.filter, got, tc.want)
		}
	}
	if f := Parse("  tenant = acme "); !f.Active() || f.Raw() != "tenant = acme" || f.String() != "tenant = acme" {
		t.Fatalf("parse: %+v %q", f, f.String())
	}
	if f := Parse("Zeta"); f.String() != "text ~ Zeta" {
		t.Fatalf("text filter describes itself as %q", f.String())
	}
	if Parse("").Active() || Parse(" ") != (Filter{}) {
		t.Fatal("an empty filter is in force")
	}
	if p := Property("CorrelationId", " x "); !p.Match(&broker.Message{CorrelationID: " x "}) || p.Match(&broker.Message{CorrelationID: "x"}) {
		t.Fatal("Property does not match its value exactly")
	}
	binary := &broker.Message{Body: []byte{0xff, 0xfe, 'z', 'e', 't', 'a'}}
	if Parse("zeta").Match(binary) {
		t.Fatal("a text filter matches inside a body that is not UTF-8")
	}
}

func TestBrowseScansUntilTheWindowIsFull(t *testing.T) {
	ctx := context.Background()
	e, err := engine.New(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.CreateEntity(ctx, broker.Entity{Path: "q", Kind: broker.KindQueue}); err != nil {
		t.Fatal(err)
	}
	var msgs []*broker.Message
	for i := 1; i <= 500; i++ {
		msgs = append(msgs, &broker.Message{MessageID: fmt.Sprint(i), ApplicationProperties: map[string]any{"even": fmt.Sprint(i%2 == 0)}})
	}
	if err := e.Send(ctx, "q", msgs); err != nil {
		t.Fatal(err)
	}
	f := Parse("even=true")
	got, scanned, partial, err := Browse(ctx, e, broker.BrowseRequest{Entity: "q", FromSequence: 11, Max: 5}, f, 1000)
	if err != nil || len(got) != 5 || got[0].SequenceNumber != 12 || got[4].SequenceNumber != 20 || partial {
		t.Fatalf("window: %d messages from %v, scanned %d, partial %v, %v", len(got), got, scanned, partial, err)
	}
	got, scanned, partial, err = Browse(ctx, e, broker.BrowseRequest{Entity: "q", Max: 1000}, f, 100)
	if err != nil || len(got) != 50 || scanned != 100 || !partial {
		t.Fatalf("scan limit: %d messages, scanned %d, partial %v, %v", len(got), scanned, partial, err)
	}
	got, _, partial, err = Browse(ctx, e, broker.BrowseRequest{Entity: "q", Max: 1000}, f, 1<<30)
	if err != nil || len(got) != 250 || partial {
		t.Fatalf("whole queue: %d messages, partial %v, %v", len(got), partial, err)
	}
}
