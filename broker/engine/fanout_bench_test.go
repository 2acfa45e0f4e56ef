package engine

import (
	"context"
	"testing"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// BenchmarkTopicSend4 sends one 256-byte message at a time to a topic with
// four subscriptions that take every message; the subscriptions are purged,
// off the clock, every 4096 sends.
func BenchmarkTopicSend4(b *testing.B) {
	b.Run("store=memory", func(b *testing.B) { benchTopicSend(b, store.NewMemory(), 4) })
	b.Run("store=pebble", func(b *testing.B) {
		st, err := store.OpenPebble(b.TempDir(), store.PebbleOptions{})
		if err != nil {
			b.Fatal(err)
		}
		benchTopicSend(b, st, 4)
	})
}

func benchTopicSend(b *testing.B, st store.Store, subs int) {
	e, err := New(Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	if err := e.CreateEntity(ctx, broker.Entity{Path: "t", Kind: broker.KindTopic}); err != nil {
		b.Fatal(err)
	}
	for i := range subs {
		if err := e.CreateEntity(ctx, broker.Entity{Path: "t/Subscriptions/s" + itoa(i), Kind: broker.KindSubscription}); err != nil {
			b.Fatal(err)
		}
	}
	body := make([]byte, 256)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%4096 == 4095 {
			b.StopTimer()
			if _, err := e.Purge(ctx, "t", broker.SubQueueMain); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if err := e.Send(ctx, "t", []*broker.Message{{Body: body}}); err != nil {
			b.Fatal(err)
		}
	}
}
