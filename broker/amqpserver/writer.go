package amqpserver

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
)

// deliveryBudget bounds the bytes of deliveries (transfers of entity
// messages) queued on one connection and not yet written: a deliverer
// waits for room (awaitRoom) before it takes its session's lock, so a
// peer that reads slowly slows its own deliveries and nothing else. The
// bound is soft: every deliverer that found room queues its next delivery,
// so the queue can pass the budget by one delivery (at most the entity's
// MaxMessageSizeInKilobytes, in frames) per link delivering at that moment,
// and no more; the links of a connection are bounded by Options'
// MaxSessionsPerConnection and MaxLinksPerSession.
const deliveryBudget = 1 << 20

// maxControlBacklog bounds the bytes of other frames (flows, dispositions,
// attaches, responses...) queued and not yet written. They are queued
// without waiting, under the session's lock, in the order the session's
// state changed; they answer what the peer sends, so a peer that sends on
// and on without reading what it asked for ends here: the connection is
// closed.
const maxControlBacklog = 4 << 20

// maxWriteBatch is how many queued buffers one write system call carries.
const maxWriteBatch = 64

// minHeartbeat is the shortest heartbeat interval the listener keeps, so a
// peer announcing a tiny idle timeout cannot make it spin.
const minHeartbeat = 100 * time.Millisecond

// queued is one buffer waiting to be written: one or more whole frames, or
// a protocol header.
type queued struct {
	b        []byte
	delivery bool // counted in deliveryBytes
}

// writer is the one goroutine that writes to a connection: frames from a
// queue, and an empty frame whenever nothing was written for half the
// peer's idle timeout.
//
// Queuing never waits, so that it can happen under a session's lock in
// the order of the session's state: frames are never written, nor waited
// on, with a session or link lock held, and the reader goroutine never
// waits on the writer. Deliveries are bounded by deliveryBudget, which
// deliverers wait on before they lock (awaitRoom); other frames by
// maxControlBacklog. mu is a leaf lock (taken under a session's mutex,
// never the other way round) held only to queue and dequeue.
type writer struct {
	nc      net.Conn
	clock   clockwork.Clock
	timeout time.Duration // real-time write deadline per write
	log     *slog.Logger  // may be nil

	mu            sync.Mutex
	queue         []queued
	spare         []queued // the previous batch's array, reused
	deliveryBytes int
	controlBytes  int
	closed        bool          // stopped or failed: nothing more is queued
	room          chan struct{} // closed when deliveryBytes falls below the budget; nil when nobody waits
	ready         chan struct{} // capacity 1: something was queued

	stop     chan struct{} // closed: write what is queued, then exit
	stopOnce sync.Once
	done     chan struct{} // closed when the writer has exited
	beat     chan time.Duration
	wrote    atomic.Bool // something was written since the last heartbeat tick
	failed   atomic.Bool
	bufs     net.Buffers // scratch for one batch

	// join is set for connections that are not plain TCP sockets (TLS,
	// WebSockets, a front's wrapper): they have no vectored write, so a
	// batch is copied into scratch and written at once, one TLS record or
	// WebSocket message per batch instead of one per frame.
	join    bool
	scratch []byte

	// sent counts the bytes written, for metrics; nil: not counted.
	sent *atomic.Uint64
}

func newWriter(nc net.Conn, clock clockwork.Clock, timeout time.Duration) *writer {
	return &writer{
		nc:      nc,
		clock:   clock,
		timeout: timeout,
		ready:   make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		beat:    make(chan time.Duration, 1),
		join:    !isTCP(nc),
	}
}

// isTCP reports whether nc is a TCP socket, which net.Buffers writes with
// one vectored system call.
func isTCP(nc net.Conn) bool {
	_, ok := nc.(*net.TCPConn)
	return ok
}

// joinChunk bounds the bytes copied together for one write; a buffer at
// least this big is written on its own.
const joinChunk = 64 << 10

// send queues b (one or more whole frames, or a protocol header) and
// reports false when the writer has stopped. It never waits; a peer that
// lets more than maxControlBacklog pile up is disconnected.
func (w *writer) send(b []byte) bool { return w.push(b, false) }

// sendDelivery queues the frames of a delivery, counted in the delivery
// budget; like send it never waits (the deliverer waited in awaitRoom).
func (w *writer) sendDelivery(b []byte) bool { return w.push(b, true) }

func (w *writer) push(b []byte, delivery bool) bool {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return false
	}
	if delivery {
		w.deliveryBytes += len(b)
	} else {
		w.controlBytes += len(b)
		if w.controlBytes > maxControlBacklog {
			w.mu.Unlock()
			w.failWith("closing a connection whose peer does not read its frames", "backlog", maxControlBacklog)
			return false
		}
	}
	w.queue = append(w.queue, queued{b: b, delivery: delivery})
	w.mu.Unlock()
	select {
	case w.ready <- struct{}{}:
	default:
	}
	return true
}

// awaitRoom waits, with no lock held, until the queued deliveries are
// below the budget; it reports false when the writer or ctx ended.
func (w *writer) awaitRoom(ctx context.Context) bool {
	for {
		w.mu.Lock()
		if w.closed {
			w.mu.Unlock()
			return false
		}
		if w.deliveryBytes < deliveryBudget {
			w.mu.Unlock()
			return true
		}
		if w.room == nil {
			w.room = make(chan struct{})
		}
		room := w.room
		w.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return false
		case <-w.done:
			return false
		}
	}
}

// take removes and returns everything queued.
func (w *writer) take() []queued {
	w.mu.Lock()
	defer w.mu.Unlock()
	items := w.queue
	w.queue, w.spare = w.spare[:0], nil
	return items
}

// written releases the budget of written buffers and wakes deliverers
// waiting for room.
func (w *writer) written(items []queued) {
	var delivery, control int
	for _, it := range items {
		if it.delivery {
			delivery += len(it.b)
		} else {
			control += len(it.b)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deliveryBytes -= delivery
	w.controlBytes -= control
	if w.room != nil && w.deliveryBytes < deliveryBudget {
		close(w.room)
		w.room = nil
	}
}

// maxSpare bounds the array recycle keeps, so that a burst does not pin
// its queue's memory for the life of the connection.
const maxSpare = 1024

// recycle keeps the array of a written batch for the next one.
func (w *writer) recycle(items []queued) {
	if cap(items) > maxSpare {
		return
	}
	clear(items)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.spare == nil && !w.closed {
		w.spare = items[:0]
	}
}

// heartbeat makes the writer send empty frames every d when idle.
func (w *writer) heartbeat(d time.Duration) {
	select {
	case w.beat <- max(d, minHeartbeat):
	default:
	}
}

// shutdown makes the writer write what is queued and exit; nothing queued
// after it is written.
func (w *writer) shutdown() {
	w.stopOnce.Do(func() {
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		close(w.stop)
	})
}

// fail drops what is queued and closes the connection (the reader sees
// it and tears the connection down).
func (w *writer) fail() { w.failWith("") }

// failWith is fail with a line for the log (none when msg is empty),
// written by the goroutine that closes the connection, never by the caller.
func (w *writer) failWith(msg string, args ...any) {
	if w.failed.Swap(true) {
		return
	}
	w.mu.Lock()
	w.closed = true
	w.queue, w.spare = nil, nil
	if w.room != nil {
		close(w.room)
		w.room = nil
	}
	w.mu.Unlock()
	// Close may wait for a write in progress (TLS); never on the caller,
	// which can hold a session lock.
	go func() {
		if msg != "" && w.log != nil {
			w.log.Info(msg, args...)
		}
		_ = w.nc.Close()
	}()
}

func (w *writer) run() {
	defer close(w.done)
	var tick <-chan time.Time
	var ticker clockwork.Ticker
	defer func() {
		if ticker != nil {
			ticker.Stop()
		}
	}()
	for {
		select {
		case <-w.ready:
			if !w.flush() {
				return
			}
		case <-w.stop:
			w.flush()
			return
		case d := <-w.beat:
			if ticker != nil {
				ticker.Stop()
			}
			ticker = w.clock.NewTicker(d)
			tick = ticker.Chan()
		case <-tick:
			if !w.wrote.Swap(false) {
				if !w.writeBuffers(net.Buffers{wire.AppendEmptyFrame(nil)}) {
					return
				}
			}
		}
	}
}

// flush writes everything queued, maxWriteBatch buffers per system call,
// until the queue is empty; it reports false when a write failed.
func (w *writer) flush() bool {
	for {
		all := w.take()
		if len(all) == 0 {
			return true
		}
		for items := all; len(items) > 0; {
			n := min(len(items), maxWriteBatch)
			w.bufs = w.bufs[:0]
			for _, it := range items[:n] {
				w.bufs = append(w.bufs, it.b)
			}
			ok := w.writeBuffers(w.bufs)
			clear(w.bufs[:cap(w.bufs)])
			w.written(items[:n])
			if !ok {
				return false
			}
			items = items[n:]
		}
		w.recycle(all)
	}
}

func (w *writer) writeBuffers(bufs net.Buffers) bool {
	if w.failed.Load() {
		return false
	}
	w.wrote.Store(true)
	_ = w.nc.SetWriteDeadline(time.Now().Add(w.timeout))
	if w.sent != nil {
		n := 0
		for _, b := range bufs {
			n += len(b)
		}
		w.sent.Add(uint64(n))
	}
	var err error
	if w.join && len(bufs) > 1 {
		err = w.writeJoined(bufs)
	} else {
		_, err = bufs.WriteTo(w.nc)
	}
	if err != nil {
		// The reader sees the closed connection and tears it down.
		w.fail()
		return false
	}
	return true
}

// writeJoined writes bufs in as few writes as joinChunk allows.
func (w *writer) writeJoined(bufs net.Buffers) error {
	buf := w.scratch[:0]
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		_, err := w.nc.Write(buf)
		buf = buf[:0]
		return err
	}
	for _, b := range bufs {
		if len(buf) > 0 && len(buf)+len(b) > joinChunk {
			if err := flush(); err != nil {
				return err
			}
		}
		if len(b) >= joinChunk {
			if _, err := w.nc.Write(b); err != nil {
				return err
			}
			continue
		}
		buf = append(buf, b...)
	}
	err := flush()
	w.scratch = buf[:0]
	return err
}
