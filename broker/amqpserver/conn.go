package amqpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker/amqpserver/internal/logsafe"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/wire"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/sas"
)

// conn is one client connection. Its reader goroutine (serve) owns the
// session table and handles every frame in order; link goroutines share
// each session's state under the session's mutex.
type conn struct {
	srv   *Server
	eng   *engine.Engine
	opts  *Options
	clock clockwork.Clock
	log   *slog.Logger
	nc    net.Conn
	owner uint64 // engine owner of the locks taken through this connection

	ctx    context.Context
	cancel context.CancelFunc

	r      *wire.FrameReader
	w      *writer
	grants grants
	guard  tokenGuard
	noisy  *logsafe.Limiter // the budget of log lines the peer can cause (logPeer)
	hs     handshakeTrace   // what the handshake saw (reader goroutine only)

	// Negotiated in the open exchange.
	peerMaxFrame uint32
	channelMax   uint16

	sessions map[uint16]*session // reader goroutine only

	replyMu      sync.Mutex
	replies      map[string]*link // reply links by their target address
	sessionLinks map[string]*link // session receivers by link name
	cbsLinks     [2]*link         // the links attached to $cbs: receiver (we send), sender (we receive)

	info      connInfo        // what Clients shows
	seq       uint64          // order of arrival (Server.seq)
	dropped   bool            // closed for lack of authentication (under srv.mu)
	authed    atomic.Bool     // the peer proved it holds a key (see authenticate)
	authTimer clockwork.Timer // closes the connection at the AuthTimeout unless it authenticated
	links     atomic.Int32    // links in the session tables, refused ones not yet detached included

	lastRead  atomic.Int64 // clock time of the last byte read, UnixNano
	opened    atomic.Bool  // our open was sent: a close frame may follow
	closeSent atomic.Bool
	termOnce  sync.Once
	wg        sync.WaitGroup // link and request goroutines, and the watchdog
}

func newConn(srv *Server, nc net.Conn, owner uint64) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	writeTimeout := srv.opts.IdleTimeout
	if writeTimeout <= 0 {
		writeTimeout = DefaultIdleTimeout
	}
	c := &conn{
		srv:          srv,
		eng:          srv.eng,
		opts:         &srv.opts,
		clock:        srv.opts.Clock,
		log:          srv.log.With("remote", remoteAddr(nc), "owner", fmt.Sprintf("%016x", owner)),
		nc:           nc,
		owner:        owner,
		ctx:          ctx,
		cancel:       cancel,
		r:            wire.NewFrameReader(countingReader{nc, &srv.bytesIn}, srv.opts.MaxFrameSize),
		w:            newWriter(nc, srv.opts.Clock, writeTimeout),
		peerMaxFrame: wire.MinMaxFrameSize,
		sessions:     make(map[uint16]*session),
		replies:      make(map[string]*link),
		sessionLinks: make(map[string]*link),
		noisy:        logsafe.NewLimiter(peerLogBurst, peerLogInterval),
	}
	c.w.sent = &srv.bytesOut
	if srv.opts.AllowAnonymous {
		c.grants.all = sas.AllRights
		c.authed.Store(true)
	}
	c.w.log = c.log
	c.info.at = c.clock.Now()
	c.touch()
	return c
}

// touch records that the peer sent something.
func (c *conn) touch() { c.lastRead.Store(c.clock.Now().UnixNano()) }

// serve runs the connection until it ends; it is the reader goroutine.
func (c *conn) serve() {
	defer c.teardown()
	defer func() {
		if r := recover(); r != nil {
			c.srv.panics.Add(1)
			c.log.Error("panic in a connection; closing it", "panic", logsafe.Clip(fmt.Sprint(r)), "stack", string(debug.Stack()))
			c.terminate(&wire.Error{Condition: wire.CondInternalError, Description: "internal error in the listener"})
		}
	}()
	go c.w.run()
	c.armAuthDeadline()
	if c.opts.IdleTimeout > 0 {
		c.wg.Add(1)
		go c.watchdog()
	}
	err := c.handshake()
	if err == nil {
		c.log.Debug("connection open")
		err = c.readLoop()
	} else if _, send := closeErrorFor(err); !send && !errors.Is(err, errHandshake) {
		c.logLeftEarly(err)
	}
	e, send := closeErrorFor(err)
	if send {
		c.log.Info("closing connection", "condition", logsafe.Clip(string(e.Condition)), "description", logsafe.Clip(e.Description))
	} else {
		c.log.Debug("connection ended", "err", logsafe.Err(err))
	}
	c.terminate(e)
}

// readLoop reads and handles frames until the connection ends.
func (c *conn) readLoop() error {
	for {
		fr, err := c.r.ReadFrame()
		if err != nil {
			return err
		}
		c.touch()
		if fr.Type != wire.FrameAMQP {
			return connError(wire.CondFramingError, "a SASL frame after the SASL exchange")
		}
		if fr.Body == nil {
			continue // heartbeat
		}
		if err := c.handle(fr.Channel, fr.Body); err != nil {
			return err
		}
	}
}

// handle dispatches one frame; errors it returns end the connection.
func (c *conn) handle(ch uint16, p wire.Performative) error {
	switch p := p.(type) {
	case *wire.Open:
		return connError(wire.CondIllegalState, "a second open on an open connection")
	case *wire.Close:
		if p.Error != nil {
			c.logPeer("peer closed the connection with an error", "condition", logsafe.Clip(string(p.Error.Condition)), "description", logsafe.Clip(p.Error.Description))
		}
		c.sendClose(nil)
		return errPeerClosed
	case *wire.Begin:
		return c.onBegin(ch, p)
	}
	s := c.sessions[ch]
	if s == nil {
		if _, stray := p.(*wire.End); stray {
			// go-amqp sends an end after a session setup it gave up on
			// (its begin timed out and our answer came late, or never):
			// ending a session that does not exist harms nothing.
			c.log.Debug("end on a channel without a session ignored", "channel", ch)
			return nil
		}
		return connError(wire.CondNotAllowed, "%T on channel %d, which has no session", p, ch)
	}
	err := s.handle(p)
	if err == nil {
		return nil
	}
	pe, ok := err.(*protocolError)
	if ok && pe.scope == scopeSession {
		s.fail(pe.wireError())
		return nil
	}
	return err
}

// sendFrame encodes and queues one frame; it reports false when the
// connection is going away.
func (c *conn) sendFrame(ch uint16, p wire.Performative) bool {
	ok, err := c.w.sendFrame(ch, p)
	if err != nil {
		c.log.Error("cannot encode a frame", "frame", fmt.Sprintf("%T", p), "err", err)
	}
	return ok
}

// sendClose sends our close frame once.
func (c *conn) sendClose(e *wire.Error) {
	if c.opened.Load() && !c.closeSent.Swap(true) {
		c.sendFrame(0, &wire.Close{Error: e})
	}
}

// terminate closes the connection: the close frame (when the open exchange
// happened and none was sent yet) is written after what is queued, then
// the socket is closed. It is safe to call from any goroutine, any number
// of times.
func (c *conn) terminate(e *wire.Error) {
	c.termOnce.Do(func() {
		if e != nil {
			c.sendClose(e)
		}
		c.w.shutdown()
		t := time.NewTimer(closeGrace)
		select {
		case <-c.w.done:
		case <-t.C:
		}
		t.Stop()
		_ = c.nc.Close()
		c.cancel()
	})
}

// teardown ends every session and link, waits for their goroutines and
// releases the connection's locks.
func (c *conn) teardown() {
	c.terminate(nil)
	if c.authTimer != nil {
		c.authTimer.Stop()
	}
	for ch, s := range c.sessions {
		s.shutdown()
		delete(c.sessions, ch)
	}
	c.wg.Wait()
	<-c.w.done
	c.eng.DropOwner(c.owner)
	if n := c.noisy.Suppressed(); n > 0 {
		c.log.Info("log lines of this connection were suppressed", "count", n)
	}
}

// watchdog closes the connection when the peer stays silent past the idle
// timeout.
func (c *conn) watchdog() {
	defer c.wg.Done()
	idle := c.opts.IdleTimeout
	t := c.clock.NewTicker(max(idle/4, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.Chan():
			silent := c.clock.Now().Sub(time.Unix(0, c.lastRead.Load()))
			if silent > idle {
				c.log.Info("closing a silent connection", "silent", silent, "idle-timeout", idle)
				c.terminate(&wire.Error{Condition: wire.CondResourceLimitExceeded,
					Description: fmt.Sprintf("no frame for %v: the idle timeout is %v", silent, idle)})
				return
			}
		}
	}
}

// goSafe runs fn in a goroutine counted in c.wg; a panic in it is
// recovered, logged, and closes the connection.
func (c *conn) goSafe(fn func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer func() {
			if r := recover(); r != nil {
				c.srv.panics.Add(1)
				c.log.Error("panic in a link goroutine; closing the connection", "panic", logsafe.Clip(fmt.Sprint(r)), "stack", string(debug.Stack()))
				go c.terminate(&wire.Error{Condition: wire.CondInternalError, Description: "internal error in the listener"})
			}
		}()
		fn()
	}()
}

// onBegin starts a session on channel ch.
func (c *conn) onBegin(ch uint16, b *wire.Begin) error {
	if b.RemoteChannel.Set {
		return connError(wire.CondNotAllowed, "begin with remote-channel %d: the listener never begins sessions", b.RemoteChannel.Value)
	}
	if ch > c.channelMax {
		return connError(wire.CondFramingError, "begin on channel %d beyond channel-max %d", ch, c.channelMax)
	}
	if _, ok := c.sessions[ch]; ok {
		return connError(wire.CondNotAllowed, "begin on channel %d, which has a session already", ch)
	}
	if err := c.checkPreAuthBegin(); err != nil {
		return err
	}
	s := newSession(c, ch, b)
	c.sessions[ch] = s
	c.sendFrame(ch, &wire.Begin{
		RemoteChannel:  wire.Some(ch),
		NextOutgoingID: s.nextOutgoingID,
		IncomingWindow: s.incomingWindow,
		OutgoingWindow: sessionWindow,
		HandleMax:      wire.Some(s.handleMax),
	})
	return nil
}

// endSession forgets a session that ended.
func (c *conn) endSession(ch uint16) { delete(c.sessions, ch) }

// registerReply makes l the link that receives responses sent to addr.
func (c *conn) registerReply(addr string, l *link) bool {
	c.replyMu.Lock()
	defer c.replyMu.Unlock()
	if _, ok := c.replies[addr]; ok {
		return false
	}
	c.replies[addr] = l
	return true
}

func (c *conn) unregisterReply(addr string, l *link) {
	c.replyMu.Lock()
	defer c.replyMu.Unlock()
	if c.replies[addr] == l {
		delete(c.replies, addr)
	}
}

// registerSessionLink records a session receiver that holds its session,
// so that management requests find the session it concerns.
func (c *conn) registerSessionLink(l *link) {
	c.replyMu.Lock()
	defer c.replyMu.Unlock()
	c.sessionLinks[l.name] = l
}

func (c *conn) unregisterSessionLink(l *link) {
	c.replyMu.Lock()
	defer c.replyMu.Unlock()
	if c.sessionLinks[l.name] == l {
		delete(c.sessionLinks, l.name)
	}
}
