package broker

import "testing"

func TestPassthroughIsZero(t *testing.T) {
	var nilP *Passthrough
	for _, c := range []struct {
		p    *Passthrough
		zero bool
	}{
		{nilP, true},
		{&Passthrough{}, true},
		{&Passthrough{Priority: 9}, true}, // no HasPriority: the priority is not set
		{&Passthrough{Durable: true}, false},
		{&Passthrough{HasPriority: true}, false},
		{&Passthrough{Footer: []byte{}}, false},
	} {
		if got := c.p.IsZero(); got != c.zero {
			t.Errorf("%+v: IsZero %v, want %v", c.p, got, c.zero)
		}
	}
}

func TestCloneCopiesPassthrough(t *testing.T) {
	m := &Message{AMQP: &Passthrough{Durable: true, MessageAnnotations: []byte{1, 2}}}
	c := m.Clone()
	c.AMQP.Durable = false
	c.AMQP.MessageAnnotations[0] = 9
	if !m.AMQP.Durable || m.AMQP.MessageAnnotations[0] != 1 {
		t.Fatalf("changing the clone changed the original: %+v", m.AMQP)
	}
	if (&Message{}).Clone().AMQP != nil {
		t.Fatal("a message without passthrough got one")
	}
}
