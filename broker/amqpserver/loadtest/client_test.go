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

// closeWait bounds closing a link, a session or a connection.
const closeWait = 30 * time.Second

// client is the go-amqp client of the throughput benchmarks: one
// connection, one session, cfg.senders sender links kept open, and
// cfg.receivers receiver links attached for each receive phase only (a
// receiver attached while sending would take messages meanwhile).
type client struct {
	cfg     config
	body    []byte
	conn    *amqp.Conn
	session *amqp.Session
	senders []*amqp.Sender
}

// dialClient connects to url and attaches the senders to cfg.address.
func dialClient(ctx context.Context, url string, cfg config) (*client, error) {
	conn, err := amqp.Dial(ctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", redact(url), err)
	}
	c := &client{cfg: cfg, body: benchBody(cfg.size), conn: conn}
	c.session, err = conn.NewSession(ctx, nil)
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("begin a session: %w", err)
	}
	for range cfg.senders {
		snd, err := c.session.NewSender(ctx, cfg.address, &amqp.SenderOptions{
			SettlementMode:   amqp.SenderSettleModeUnsettled.Ptr(),
			TargetDurability: c.durability(),
		})
		if err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("attach a sender to %s: %w", cfg.address, err)
		}
		c.senders = append(c.senders, snd)
	}
	return c, nil
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

// close closes the connection.
func (c *client) close() error {
	return c.conn.Close()
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

// receivers attaches cfg.receivers receivers with cfg.credit each.
func (c *client) receivers(ctx context.Context) ([]*amqp.Receiver, error) {
	var rs []*amqp.Receiver
	for range c.cfg.receivers {
		r, err := c.session.NewReceiver(ctx, c.cfg.address, &amqp.ReceiverOptions{
			Credit:           int32(c.cfg.credit),
			SourceDurability: c.durability(),
		})
		if err != nil {
			closeReceivers(rs)
			return nil, fmt.Errorf("attach a receiver to %s: %w", c.cfg.address, err)
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// closeReceivers detaches receivers; the peer takes back what they hold
// unsettled.
func closeReceivers(rs []*amqp.Receiver) {
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	for _, r := range rs {
		_ = r.Close(ctx)
	}
}

// receive receives and accepts exactly n messages on rs with cfg.acceptors
// goroutines per receiver, checking every body.
func (c *client) receive(ctx context.Context, rs []*amqp.Receiver, n int) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var got atomic.Int64
	var wg sync.WaitGroup
	for _, r := range rs {
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
		return err
	}
	return nil
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
	defer closeReceivers(rs)
	n := 0
	for _, r := range rs {
		for {
			rctx, cancel := context.WithTimeout(ctx, idle)
			msg, err := r.Receive(rctx, nil)
			cancel()
			if err != nil {
				if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
					break
				}
				return n, fmt.Errorf("drain: %w", err)
			}
			if err := r.AcceptMessage(ctx, msg); err != nil {
				return n, fmt.Errorf("drain: accept: %w", err)
			}
			n++
		}
	}
	return n, nil
}
