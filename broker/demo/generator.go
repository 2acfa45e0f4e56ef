package demo

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/google/uuid"

	"github.com/peeklock/peeklock/broker"
)

// generator makes plausible messages: JSON orders and payments, XML
// invoices, plain text, and now and then one with hostile text in its
// properties, so the dashboard's sanitising is visible in the demo.
type generator struct {
	mu  sync.Mutex
	rng *rand.Rand
	n   int
}

func newGenerator(seed uint64) *generator {
	return &generator{rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
}

func (g *generator) intn(n int) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.rng.IntN(n)
}

func (g *generator) chance(p float64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.rng.Float64() < p
}

func (g *generator) id() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var b [16]byte
	for i := range b {
		b[i] = byte(g.rng.Uint32())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return uuid.UUID(b).String()
}

// HostileProperty and HostileExplanation mark the demo's deliberately
// hostile message: one in a hundred carries terminal escapes (a colour
// change, a screen clear, an OSC 52 clipboard write) that the dashboard
// must show as plain text.
const (
	HostileProperty    = "demo-note"
	HostileExplanation = "a deliberate test of the dashboard: the escapes in Subject and note must show as text (␛…), never act on the terminal"
)

var customers = []string{"ada", "grace", "linus", "barbara", "ken", "margaret", "dennis", "frances"}
var products = []string{"keyboard", "monitor", "cable", "dock", "headset", "webcam"}

func (g *generator) message(entity string) *broker.Message {
	g.mu.Lock()
	g.n++
	n := g.n
	customer := customers[g.rng.IntN(len(customers))]
	product := products[g.rng.IntN(len(products))]
	qty := 1 + g.rng.IntN(5)
	amount := float64(g.rng.IntN(50000)) / 100
	kind := g.rng.IntN(100)
	g.mu.Unlock()

	m := &broker.Message{
		MessageID:   g.id(),
		ContentType: "application/json",
		ApplicationProperties: map[string]any{
			"customer": customer,
			"attempt":  int64(1),
		},
	}
	switch entity {
	case "orders":
		m.Subject = "order.placed"
		m.ReplyTo = "payments"
		m.Body = mustJSON(map[string]any{"order": n, "customer": customer, "lines": []any{
			map[string]any{"product": product, "quantity": qty}}, "total": amount})
	case "payments":
		m.Subject = "payment.requested"
		if kind < 20 {
			m.ContentType = "application/xml"
			m.Body = fmt.Appendf(nil, "<payment id=\"%d\"><customer>%s</customer><amount currency=\"EUR\">%.2f</amount></payment>", n, customer, amount)
		} else {
			m.Body = mustJSON(map[string]any{"payment": n, "customer": customer, "amount": amount, "currency": "EUR"})
		}
	case "carts":
		m.Subject = "cart.item-added"
		m.Body = mustJSON(map[string]any{"customer": customer, "product": product, "quantity": qty})
	default:
		m.ApplicationProperties["amount"] = amount
		subjects := []string{"invoice.created", "user.signed-up", "cart.abandoned"}
		m.Subject = subjects[kind%len(subjects)]
		if kind%7 == 0 {
			m.ContentType = "text/plain"
			m.Body = fmt.Appendf(nil, "%s for %s (#%d)", m.Subject, customer, n)
		} else {
			m.Body = mustJSON(map[string]any{"event": m.Subject, "customer": customer, "seq": n})
		}
	}
	if kind == 99 {
		// Hostile text: a terminal escape that would recolour the screen and
		// an OSC 52 clipboard write. The dashboard must show it inert, and
		// the message says what it is, so that nobody takes it for a fault.
		m.Subject = "demo: hostile text, shown inert: \x1b[31mALERT\x1b[0m \x1b]52;c;cm0gLXJmIH4=\x07"
		m.ApplicationProperties["note"] = "\x1b[2J cleared?"
		m.ApplicationProperties[HostileProperty] = HostileExplanation
	}
	return m
}

// reply answers a request: CorrelationId is the request's MessageId, and a
// ReplyToSessionId becomes the reply's SessionId.
func (g *generator) reply(req *broker.Message) *broker.Message {
	return &broker.Message{
		MessageID:     g.id(),
		CorrelationID: req.MessageID,
		SessionID:     req.ReplyToSessionID,
		Subject:       "payment.requested",
		ContentType:   "application/json",
		Body:          mustJSON(map[string]any{"inReplyTo": req.MessageID, "status": "accepted"}),
		ApplicationProperties: map[string]any{
			"customer": req.ApplicationProperties["customer"],
		},
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only literal maps of plain values are marshalled here
	}
	return b
}
