package amqpserver

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
)

// writeQueueLen bounds the frames (or groups of frames) waiting to be
// written on one connection; producers block when it is full.
const writeQueueLen = 256

// maxWriteBatch is how many queued buffers one write system call carries.
const maxWriteBatch = 64

// minHeartbeat is the shortest heartbeat interval the listener keeps, so a
// peer announcing a tiny idle timeout cannot make it spin.
const minHeartbeat = 100 * time.Millisecond

// writer is the one goroutine that writes to a connection: frames from a
// bounded queue, and an empty frame whenever nothing was written for half
// the peer's idle timeout.
type writer struct {
	nc      net.Conn
	clock   clockwork.Clock
	timeout time.Duration // real-time write deadline per write

	q        chan []byte
	stop     chan struct{} // closed: write what is queued, then exit
	stopOnce sync.Once
	done     chan struct{} // closed when the writer has exited
	beat     chan time.Duration
	wrote    atomic.Bool // something was written since the last heartbeat tick
	failed   atomic.Bool

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
		q:       make(chan []byte, writeQueueLen),
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
// reports false when the writer has stopped. It blocks while the queue is
// full.
func (w *writer) send(b []byte) bool {
	select {
	case <-w.stop:
		return false
	default:
	}
	select {
	case w.q <- b:
		return true
	case <-w.stop:
		return false
	case <-w.done:
		return false
	}
}

// heartbeat makes the writer send empty frames every d when idle.
func (w *writer) heartbeat(d time.Duration) {
	select {
	case w.beat <- max(d, minHeartbeat):
	default:
	}
}

// shutdown makes the writer write what is queued and exit.
func (w *writer) shutdown() { w.stopOnce.Do(func() { close(w.stop) }) }

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
		case b := <-w.q:
			if !w.write(b) {
				return
			}
		case <-w.stop:
			for {
				select {
				case b := <-w.q:
					if !w.write(b) {
						return
					}
				default:
					return
				}
			}
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

// write writes b and whatever else is queued, in one system call.
func (w *writer) write(b []byte) bool {
	bufs := net.Buffers{b}
	for len(bufs) < maxWriteBatch {
		select {
		case more := <-w.q:
			bufs = append(bufs, more)
			continue
		default:
		}
		break
	}
	return w.writeBuffers(bufs)
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
		w.failed.Store(true)
		_ = w.nc.Close()
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
