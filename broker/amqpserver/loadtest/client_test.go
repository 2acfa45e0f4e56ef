package loadtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/Azure/go-amqp"
)

// closeWait bounds ending the sessions of one receive phase.
const closeWait = 10 * time.Second

// client is the go-amqp client of the throughput benchmarks:
// cfg.connections connections with one session each, and cfg.senders
// sender links spread over those sessions and kept open. Each receive phase
// attaches its receivers anew on connections of its own (receiveSet): a
// receiver attached while sending would take messages meanwhile.
type client struct {
	cfg      config
	url      string
	body     []byte
	conns    []*amqp.Conn
	sessions []*amqp.Session
	senders  []*amqp.Sender
}

// dialClient connects to url and attaches the senders to cfg.address.
func dialClient(ctx context.Context, url string, cfg config) (*client, error) {
	c := &client{cfg: cfg, url: url, body: benchBody(cfg.size)}
	for range cfg.connections {
		conn, err := amqp.Dial(ctx, url, c.connOptions())
		if err != nil {
			_ = c.close()
			return nil, fmt.Errorf("dial %s: %w", redact(url), err)
		}
		c.conns = append(c.conns, conn)
		s, err := conn.NewSession(ctx, nil)
		if err != nil {
			_ = c.close()
			return nil, fmt.Errorf("begin a session: %w", err)
		}
		c.sessions = append(c.sessions, s)
	}
	for i := range cfg.senders {
		snd, err := c.sessions[i%len(c.sessions)].NewSender(ctx, cfg.address, &amqp.SenderOptions{
			SettlementMode:   amqp.SenderSettleModeUnsettled.Ptr(),
			TargetDurability: c.durability(),
		})
		if err != nil {
			_ = c.close()
			return nil, fmt.Errorf("attach a sender to %s: %w", cfg.address, err)
		}
		c.senders = append(c.senders, snd)
	}
	return c, nil
}

// connOptions are the options of the client's connections: TLS trust
// for a "tls" listener, else nil (SASL PLAIN comes from the URL).
func (c *client) connOptions() *amqp.ConnOptions {
	if c.cfg.tlsConfig == nil {
		return nil
	}
	return &amqp.ConnOptions{TLSConfig: c.cfg.tlsConfig}
}

// redact hides the password of an amqp:// URL.
func redact(url string) string {
	if at := strings.LastIndexByte(url, '@'); at > 0 {
		return "amqp://…" + url[at:]
	}
	return url
}

// benchBody returns the body of every message: size bytes of a pattern.
func benchBody(size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

// durability is the terminus durability of the links: RabbitMQ's AMQP 1.0
// plugin declares a durable queue for a durable terminus, a transient one
// otherwise (and refuses a link whose durability differs from the queue's).
func (c *client) durability() amqp.Durability {
	if c.cfg.durable {
		return amqp.DurabilityUnsettledState
	}
	return amqp.DurabilityNone
}

// close closes the connections.
func (c *client) close() error {
	var errs []error
	for _, conn := range c.conns {
		errs = append(errs, conn.Close())
	}
	return errors.Join(errs...)
}

// send sends n messages with cfg.inFlight goroutines shared round-robin by
// the senders; each send waits for the peer's outcome (accepted).
func (c *client) send(ctx context.Context, n int) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range c.cfg.inFlight {
		snd := c.senders[w%len(c.senders)]
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				msg := &amqp.Message{Header: &amqp.MessageHeader{Durable: c.cfg.durable}, Data: [][]byte{c.body}}
				if err := snd.Send(ctx, msg, nil); err != nil {
					cancel(fmt.Errorf("send: %w", err))
					return
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}

// receiveSet is the receivers of one receive phase, on connections and
// sessions of their own. Closing it ends the sessions, so that the peer
// takes every disposition sent before and takes back what the receivers
// hold unsettled, and then closes the connections. (Detaching a receiver is
// not an option: RabbitMQ 3.10's AMQP 1.0 plugin answers go-amqp's closing
// detach with a detach that does not close, so Receiver.Close waits until
// its context ends; go-amqp issue #310.)
type receiveSet struct {
	conns     []*amqp.Conn
	sessions  []*amqp.Session
	receivers []*amqp.Receiver
}

// receivers opens cfg.connections connections with a session each and
// attaches cfg.receivers receivers with cfg.credit each, spread over those
// sessions.
func (c *client) receivers(ctx context.Context) (*receiveSet, error) {
	rs := &receiveSet{}
	fail := func(err error) (*receiveSet, error) {
		_ = rs.close()
		return nil, err
	}
	for range c.cfg.connections {
		conn, err := amqp.Dial(ctx, c.url, c.connOptions())
		if err != nil {
			return fail(fmt.Errorf("dial %s: %w", redact(c.url), err))
		}
		rs.conns = append(rs.conns, conn)
		s, err := conn.NewSession(ctx, nil)
		if err != nil {
			return fail(fmt.Errorf("begin a session: %w", err))
		}
		rs.sessions = append(rs.sessions, s)
	}
	for i := range c.cfg.receivers {
		r, err := rs.sessions[i%len(rs.sessions)].NewReceiver(ctx, c.cfg.address, &amqp.ReceiverOptions{
			Credit:           int32(c.cfg.credit),
			SourceDurability: c.durability(),
		})
		if err != nil {
			return fail(fmt.Errorf("attach a receiver to %s: %w", c.cfg.address, err))
		}
		rs.receivers = append(rs.receivers, r)
	}
	return rs, nil
}

// errSessionEnd reports a receivers' session that the peer did not end.
var errSessionEnd = errors.New("a receivers' session did not end")

// close ends the sessions, each waiting for the peer's end, and closes the
// connections. It reports a session that did not end (errSessionEnd); the
// connections are closed all the same.
func (rs *receiveSet) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	var errs []error
	for _, s := range rs.sessions {
		if err := s.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%w: %w", errSessionEnd, err))
		}
	}
	for _, conn := range rs.conns {
		_ = conn.Close()
	}
	return errors.Join(errs...)
}

// receive receives and accepts exactly n messages on rs with cfg.acceptors
// goroutines per receiver, checking every body, and returns how many it
// accepted. When no message arrives for stallAfter (0: no limit) it gives
// up with errStalled.
func (c *client) receive(ctx context.Context, rs *receiveSet, n int, stallAfter time.Duration) (int, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var got atomic.Int64
	var wg sync.WaitGroup
	if stallAfter > 0 {
		go watchStall(ctx, &got, stallAfter, cancel)
	}
	for _, r := range rs.receivers {
		for range c.cfg.acceptors {
			wg.Go(func() {
				for got.Load() < int64(n) {
					msg, err := r.Receive(ctx, nil)
					if err != nil {
						if ctx.Err() == nil {
							cancel(fmt.Errorf("receive: %w", err))
						}
						return
					}
					if !bytes.Equal(msg.GetData(), c.body) {
						cancel(fmt.Errorf("received a body of %d bytes that is not the one sent", len(msg.GetData())))
						return
					}
					if err := r.AcceptMessage(ctx, msg); err != nil {
						cancel(fmt.Errorf("accept: %w", err))
						return
					}
					switch k := got.Add(1); {
					case k == int64(n):
						cancel(errReceivedAll)
					case k > int64(n):
						cancel(fmt.Errorf("received more than the %d messages sent", n))
					}
				}
			})
		}
	}
	wg.Wait()
	if err := context.Cause(ctx); !errors.Is(err, errReceivedAll) {
		if err == nil {
			err = fmt.Errorf("received %d of %d messages", got.Load(), n)
		}
		return int(got.Load()), err
	}
	return int(got.Load()), nil
}

// errStalled ends a receive phase in which the peer stopped delivering
// although messages were left and the receivers had credit. RabbitMQ 3.10's
// AMQP 1.0 plugin does this now and then under load (its credit accounting
// has known faults, fixed by the rewrite in 4.0); attaching new receivers
// gets it going again.
var errStalled = errors.New("the peer stopped delivering")

// watchStall cancels ctx with errStalled when got has not moved for d.
func watchStall(ctx context.Context, got *atomic.Int64, d time.Duration, cancel context.CancelCauseFunc) {
	tick := time.NewTicker(d / 10)
	defer tick.Stop()
	last, since := got.Load(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			if g := got.Load(); g != last {
				last, since = g, now
			} else if now.Sub(since) >= d {
				cancel(errStalled)
				return
			}
		}
	}
}

// errReceivedAll ends a receive phase that is complete.
var errReceivedAll = errors.New("received every message")

// drain receives and accepts whatever the queue holds, until no message
// arrives for idle, and returns how many it took.
func (c *client) drain(ctx context.Context, idle time.Duration) (int, error) {
	rs, err := c.receivers(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range rs.receivers {
		for {
			rctx, cancel := context.WithTimeout(ctx, idle)
			msg, err := r.Receive(rctx, nil)
			cancel()
			if err != nil {
				if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
					break
				}
				_ = rs.close()
				return n, fmt.Errorf("drain: %w", err)
			}
			if err := r.AcceptMessage(ctx, msg); err != nil {
				_ = rs.close()
				return n, fmt.Errorf("drain: accept: %w", err)
			}
			n++
		}
	}
	return n, rs.close()
}
