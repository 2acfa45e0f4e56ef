package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
)

// EntityAdmin creates entities; the embedded engine is one.
type EntityAdmin interface {
	CreateEntity(ctx context.Context, e broker.Entity) error
}

// Setup creates the entities of cfg that do not exist yet.
func Setup(ctx context.Context, admin EntityAdmin, cfg Config) error {
	for _, e := range cfg.Entities {
		if err := admin.CreateEntity(ctx, e); err != nil && !errors.Is(err, broker.ErrAlreadyExists) {
			return err
		}
	}
	return nil
}

// Options tune a Run.
type Options struct {
	Clock  clockwork.Clock // nil: real time
	Seed   uint64          // 0: random
	Logger *slog.Logger    // nil: discard
}

// Run produces and consumes cfg's traffic on c until ctx is done. It starts
// one producer per workload and the workload's consumers per receive path,
// and nothing else: the number of goroutines is fixed by cfg.
func Run(ctx context.Context, c broker.Client, cfg Config, opts Options) {
	if opts.Clock == nil {
		opts.Clock = clockwork.NewRealClock()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	seed := opts.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	var wg sync.WaitGroup
	for i, w := range cfg.Workloads {
		r := &runner{c: c, w: w, clock: opts.Clock, log: opts.Logger, gen: newGenerator(seed + uint64(i)*7919)}
		if w.Rate > 0 {
			wg.Go(func() { r.produce(ctx) })
		}
		for j, path := range w.Receive {
			for k := range w.Consumers {
				rng := rand.New(rand.NewPCG(seed, uint64(i*1000+j*100+k)))
				wg.Go(func() { r.consume(ctx, path, rng) })
			}
			if w.MaxDeadLettered > 0 {
				wg.Go(func() { r.janitor(ctx, path) })
			}
		}
	}
	wg.Wait()
}

type runner struct {
	c     broker.Client
	w     Workload
	clock clockwork.Clock
	log   *slog.Logger
	gen   *generator
}

// produce sends at the workload's rate.
func (r *runner) produce(ctx context.Context) {
	every := time.Duration(float64(time.Second) / r.w.Rate)
	t := r.clock.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.Chan():
		}
		if r.backlogFull(ctx) {
			continue
		}
		m := r.gen.message(r.w.Entity)
		if r.w.Sessions > 0 {
			m.SessionID = fmt.Sprintf("cart-%d", 1+r.gen.intn(r.w.Sessions))
		}
		var err error
		if r.gen.chance(r.w.Scheduled) {
			at := r.clock.Now().Add(time.Duration(5+r.gen.intn(20)) * time.Second)
			_, err = r.c.Schedule(ctx, r.w.Entity, at, []*broker.Message{m})
		} else {
			err = r.c.Send(ctx, r.w.Entity, []*broker.Message{m})
		}
		if err != nil && ctx.Err() == nil {
			r.log.Debug("demo send failed", "entity", r.w.Entity, "err", err)
		}
	}
}

// backlogFull reports whether the workload has a MaxBacklog that one of its
// receive paths has reached. A failed count does not stop the producer.
func (r *runner) backlogFull(ctx context.Context) bool {
	if r.w.MaxBacklog <= 0 {
		return false
	}
	ents, err := r.c.Entities(ctx)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if slices.Contains(r.w.Receive, e.Path) && e.Counts.Active+e.Counts.Scheduled >= r.w.MaxBacklog {
			return true
		}
	}
	return false
}

// janitorEvery is how often the janitor looks at the dead-letter queues.
const janitorEvery = 2 * time.Second

// janitor keeps the dead-letter queues of path at most MaxDeadLettered
// deep: it removes the oldest beyond that (receive and delete), as an
// operator clearing out what was looked at would.
func (r *runner) janitor(ctx context.Context, path string) {
	t := r.clock.NewTicker(janitorEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.Chan():
		}
		ents, err := r.c.Entities(ctx)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.Path != path {
				continue
			}
			for _, sub := range []struct {
				sq broker.SubQueue
				n  int64
			}{{broker.SubQueueDeadLetter, e.Counts.DeadLettered}, {broker.SubQueueTransferDeadLetter, e.Counts.TransferDeadLettered}} {
				if over := sub.n - r.w.MaxDeadLettered; over > 0 {
					_, err := r.c.Receive(ctx, broker.ReceiveRequest{Entity: path, SubQueue: sub.sq, Mode: broker.ReceiveAndDelete, Max: int(over)})
					if err != nil && ctx.Err() == nil {
						r.log.Debug("demo janitor failed", "entity", path, "err", err)
					}
				}
			}
		}
	}
}

// maxDeferred bounds the deferred messages a consumer remembers to fetch
// back; beyond it, it completes instead of deferring, so that no deferred
// message is forgotten (it would stay deferred for good).
const maxDeferred = 100

// consume receives one message at a time and settles it as the mix says.
// Deferred messages are fetched back by sequence number a little later.
func (r *runner) consume(ctx context.Context, path string, rng *rand.Rand) {
	if r.w.Sessions > 0 {
		r.consumeSessions(ctx, path, rng)
		return
	}
	var deferred []int64
	for ctx.Err() == nil {
		if len(deferred) > 0 && rng.IntN(4) == 0 {
			seq := deferred[0]
			deferred = deferred[1:]
			if ms, err := r.c.ReceiveDeferred(ctx, path, []int64{seq}); err == nil {
				for _, m := range ms {
					r.settle(ctx, path, m, broker.Complete, rng)
				}
			}
		}
		ms, err := r.c.Receive(ctx, broker.ReceiveRequest{Entity: path, Mode: broker.PeekLock, Max: 1, MaxWait: 2 * time.Second})
		if err != nil {
			if ctx.Err() == nil {
				r.log.Debug("demo receive failed", "entity", path, "err", err)
				r.sleep(ctx, time.Second)
			}
			continue
		}
		for _, m := range ms {
			if kind, ok := r.work(ctx, path, m, rng, len(deferred) < maxDeferred); ok && kind == broker.Defer {
				deferred = append(deferred, m.SequenceNumber)
			}
		}
	}
}

// work processes one locked message: it waits the processing time and
// settles as the mix says, or (ok false) keeps the lock until it runs out.
// Without canDefer a deferral is a completion: a deferred message that
// nobody fetches back stays for good.
func (r *runner) work(ctx context.Context, path string, m *broker.Message, rng *rand.Rand, canDefer bool) (kind broker.SettleKind, ok bool) {
	lo, hi := r.w.Processing[0], r.w.Processing[1]
	d := lo
	if hi > lo {
		d += time.Duration(rng.Int64N(int64(hi - lo)))
	}
	kind, expire := r.pick(rng)
	if expire {
		return kind, false
	}
	if kind == broker.Defer && !canDefer {
		kind = broker.Complete
	}
	r.sleep(ctx, d)
	r.settle(ctx, path, m, kind, rng)
	return kind, true
}

// consumeSessions works session by session: it takes the lock of the next
// session with messages, handles up to three of them, and gives the session
// back. It does not defer (it would not fetch the message back).
func (r *runner) consumeSessions(ctx context.Context, path string, rng *rand.Rand) {
	sc, ok := broker.SessionsOf(r.c)
	if !ok {
		r.log.Debug("demo: the endpoint has no sessions", "entity", path)
		return
	}
	for ctx.Err() == nil {
		l, err := sc.LockSession(ctx, path, "", 2*time.Second)
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, broker.ErrTimeout) {
				r.log.Debug("demo: lock session failed", "entity", path, "err", err)
				r.sleep(ctx, time.Second)
			}
			continue
		}
		for range 3 {
			ms, err := sc.ReceiveFromSession(ctx, l.SessionID, broker.ReceiveRequest{Entity: path, Mode: broker.PeekLock, Max: 1})
			if err != nil || len(ms) == 0 {
				break
			}
			r.work(ctx, path, ms[0], rng, false) // a session consumer fetches nothing back
		}
		if err := sc.UnlockSession(ctx, path, l.SessionID); err != nil && ctx.Err() == nil && !errors.Is(err, broker.ErrSessionLockLost) {
			r.log.Debug("demo: unlock session failed", "entity", path, "err", err)
		}
	}
}

func (r *runner) pick(rng *rand.Rand) (broker.SettleKind, bool) {
	mix := r.w.Mix
	total := mix.total()
	if total <= 0 {
		return broker.Complete, false
	}
	n := rng.IntN(total)
	for _, o := range []struct {
		weight int
		kind   broker.SettleKind
		expire bool
	}{
		{mix.Complete, broker.Complete, false},
		{mix.Abandon, broker.Abandon, false},
		{mix.Expire, broker.Complete, true},
		{mix.DeadLetter, broker.DeadLetter, false},
		{mix.Defer, broker.Defer, false},
	} {
		if n < o.weight {
			return o.kind, o.expire
		}
		n -= o.weight
	}
	return broker.Complete, false
}

func (r *runner) settle(ctx context.Context, path string, m *broker.Message, kind broker.SettleKind, rng *rand.Rand) {
	s := broker.Settlement{Kind: kind, Entity: path, Token: m.LockToken}
	if kind == broker.DeadLetter {
		reason := deadLetterReasons[rng.IntN(len(deadLetterReasons))]
		s.Reason, s.Description = reason[0], reason[1]
	}
	if err := r.c.Settle(ctx, s); err != nil {
		if ctx.Err() == nil {
			r.log.Debug("demo settle failed", "entity", path, "kind", kind, "err", err)
		}
		return
	}
	// A completed request gets a reply, so request/reply links show up.
	if kind == broker.Complete && m.ReplyTo != "" {
		reply := r.gen.reply(m)
		if err := r.c.Send(ctx, m.ReplyTo, []*broker.Message{reply}); err != nil && ctx.Err() == nil {
			r.log.Debug("demo reply failed", "to", m.ReplyTo, "err", err)
		}
	}
}

func (r *runner) sleep(ctx context.Context, d time.Duration) {
	t := r.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.Chan():
	}
}

var deadLetterReasons = [][2]string{
	{"ValidationFailed", "field 'amount' must be positive"},
	{"SchemaMismatch", "unknown field 'couponCode' in version 2"},
	{"DownstreamUnavailable", "inventory service returned 503 three times"},
	{"PoisonMessage", "deserialisation failed at byte 17"},
}
