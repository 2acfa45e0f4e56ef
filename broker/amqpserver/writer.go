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

// chunkSize is the size of the buffers frames are encoded into. Chunks
// come from a pool shared by every connection and go back to it once
// written, so an idle connection keeps none; a frame bigger than a chunk
// gets a buffer of its own.
const chunkSize = 32 << 10

// controlRoom is the room a chunk must have left for another frame that is
// not a delivery: most flows, dispositions and attaches are far smaller
// (a bigger one makes append grow the chunk, which is correct, only not
// free).
const controlRoom = 1 << 10

// chunks is the pool of chunkSize buffers.
var chunks = sync.Pool{New: func() any { return new([chunkSize]byte) }}

// minHeartbeat is the shortest heartbeat interval the listener keeps, so a
// peer announcing a tiny idle timeout cannot make it spin.
const minHeartbeat = 100 * time.Millisecond

// writer is the one goroutine that writes to a connection: the frames
// queued, and an empty frame whenever nothing was written for half the
// peer's idle timeout.
//
// Frames are queued by encoding them at the end of the last of a list of
// pooled chunks, so that a frame costs no allocation of its own and a
// batch is one write system call (writev) on a socket; the writer takes
// the whole list, writes it, and gives the chunks back.
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
	timeout time.Duration // real-time write deadline per write (at least 7/8 of it left when a write starts)
	log     *slog.Logger  // may be nil

	mu            sync.Mutex
	bufs          net.Buffers   // queued frames, in order, in chunks
	bufDelivery   int           // bytes of deliveries in bufs
	spare         net.Buffers   // the previous batch's list, reused
	deliveryBytes int           // bytes of deliveries queued or being written
	controlBytes  int           // bytes of other frames queued or being written
	closed        bool          // stopped or failed: nothing more is queued
	room          chan struct{} // closed when deliveryBytes falls below the budget; nil when nobody waits
	ready         chan struct{} // capacity 1: something was queued

	stop     chan struct{} // closed: write what is queued, then exit
	stopOnce sync.Once
	done     chan struct{} // closed when the writer has exited
	beat     chan time.Duration
	wrote    atomic.Bool // something was written since the last heartbeat tick
	failed   atomic.Bool
	iov      net.Buffers // the writing goroutine's copy of a batch's list, which a write consumes
	deadline time.Time   // the write deadline set last (writing goroutine only)

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
	}
}

// send queues b (one or more whole frames, or a protocol header) and
// reports false when the writer has stopped. It never waits; a peer that
// lets more than maxControlBacklog pile up is disconnected.
func (w *writer) send(b []byte) bool {
	ok, _ := w.encode(false, len(b), func(dst []byte) ([]byte, error) { return append(dst, b...), nil })
	return ok
}

// sendFrame encodes one frame into the queue; false when the writer has
// stopped or the frame cannot be encoded (err).
func (w *writer) sendFrame(ch uint16, p wire.Performative) (bool, error) {
	return w.encode(false, controlRoom, func(dst []byte) ([]byte, error) { return wire.AppendFrame(dst, wire.FrameAMQP, ch, p) })
}

// encode queues the frames that enc appends to the queue's last chunk,
// which it makes sure has room for at least size bytes; they are counted
// in the delivery budget when delivery is set (the deliverer waited in
// awaitRoom). It never waits. It reports false when the writer has
// stopped or enc failed (err; nothing is queued then).
func (w *writer) encode(delivery bool, size int, enc func([]byte) ([]byte, error)) (bool, error) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return false, nil
	}
	last := len(w.bufs) - 1
	if last < 0 || cap(w.bufs[last])-len(w.bufs[last]) < size {
		var c []byte
		if size <= chunkSize {
			c = chunks.Get().(*[chunkSize]byte)[:0]
		} else {
			c = make([]byte, 0, size)
		}
		w.bufs = append(w.bufs, c)
		last++
	}
	start := len(w.bufs[last])
	b, err := enc(w.bufs[last])
	if err != nil {
		w.bufs[last] = b[:start]
		w.mu.Unlock()
		return false, err
	}
	w.bufs[last] = b
	n := len(b) - start
	if delivery {
		w.deliveryBytes += n
		w.bufDelivery += n
	} else {
		w.controlBytes += n
		if w.controlBytes > maxControlBacklog {
			w.mu.Unlock()
			w.failWith("closing a connection whose peer does not read its frames", "backlog", maxControlBacklog)
			return false, nil
		}
	}
	w.mu.Unlock()
	select {
	case w.ready <- struct{}{}:
	default:
	}
	return true, nil
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

// take removes and returns everything queued, with the bytes of
// deliveries in it.
func (w *writer) take() (bufs net.Buffers, delivery int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.bufs) == 0 {
		return nil, 0
	}
	bufs, delivery = w.bufs, w.bufDelivery
	w.bufs, w.spare, w.bufDelivery = w.spare, nil, 0
	return bufs, delivery
}

// written releases the budget of a written batch, wakes deliverers
// waiting for room, and gives its chunks back.
func (w *writer) written(bufs net.Buffers, delivery int) {
	n := 0
	for i, b := range bufs {
		n += len(b)
		if cap(b) == chunkSize {
			chunks.Put((*[chunkSize]byte)(b[:chunkSize]))
		}
		bufs[i] = nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deliveryBytes -= delivery
	w.controlBytes -= n - delivery
	if w.room != nil && w.deliveryBytes < deliveryBudget {
		close(w.room)
		w.room = nil
	}
	if cap(bufs) <= maxSpareList && !w.closed {
		w.spare = bufs[:0]
	}
}

// maxSpareList bounds the list of chunks a writer keeps for its next
// batch.
const maxSpareList = 64

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
	w.bufs, w.spare = nil, nil
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
				if !w.write(net.Buffers{wire.AppendEmptyFrame(nil)}) {
					return
				}
			}
		}
	}
}

// flush writes everything queued, one system call per batch, until the
// queue is empty; it reports false when a write failed.
func (w *writer) flush() bool {
	for {
		bufs, delivery := w.take()
		if len(bufs) == 0 {
			return true
		}
		ok := w.write(bufs)
		w.written(bufs, delivery)
		if !ok {
			return false
		}
	}
}

// write writes a batch: with one vectored system call on a socket, a Write
// per chunk on a wrapped connection (a TLS record holds 16 KiB at most).
func (w *writer) write(bufs net.Buffers) bool {
	if w.failed.Load() {
		return false
	}
	w.wrote.Store(true)
	// The deadline moves only when less than seven eighths of the timeout
	// is left: on a busy connection most writes change no timer.
	if now := time.Now(); w.deadline.Sub(now) < w.timeout-w.timeout/8 {
		w.deadline = now.Add(w.timeout)
		_ = w.nc.SetWriteDeadline(w.deadline)
	}
	if w.sent != nil {
		n := 0
		for _, b := range bufs {
			n += len(b)
		}
		w.sent.Add(uint64(n))
	}
	w.iov = append(w.iov[:0], bufs...)
	_, err := w.iov.WriteTo(w.nc)
	clear(w.iov[:cap(w.iov)])
	if err != nil {
		// The reader sees the closed connection and tears it down.
		w.fail()
		return false
	}
	return true
}
