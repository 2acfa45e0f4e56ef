package remote

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
)

// State texts.
const (
	StateConnected = "connected"
	StateClosed    = "closed"
)

// Client is a broker.Client on a remote endpoint. Every method is safe for
// concurrent use.
type Client struct {
	cfg    Config
	clock  clockwork.Clock
	log    *slog.Logger
	tokens tokenSource // nil for generic brokers
	admin  *adminClient

	mu      sync.Mutex
	conn    *connection // nil while reconnecting or closed
	gen     uint64
	attempt int
	lastErr error
	closed  bool
	notice  string
	counts  map[string]countsAt // by lower-case entity path

	locks    heldLocks
	sessions heldSessions
	localSeq atomic.Int64 // sequence numbers for brokers that assign none
	// notRabbit is set when the generic broker's open named a product other
	// than RabbitMQ: plain entity names are then its addresses as they are
	// (genericAddress).
	notRabbit atomic.Bool

	kick chan struct{}
	// nextRefresh is when the refresh loop will next wake (unix ns on the
	// client's clock), set before it waits: tests on a fake clock wait for
	// it before they advance.
	nextRefresh atomic.Int64
	done        chan struct{}
	wg          sync.WaitGroup
}

var _ broker.Client = (*Client)(nil)

// countsAt are an entity's counts as of the last entity list.
type countsAt struct {
	counts broker.Counts
	at     time.Time
}

// connection is one AMQP connection and what hangs off it: cached links and
// the claims put on its $cbs node. Everything in it is lost with it.
type connection struct {
	gen  uint64
	amqp *amqp.Conn

	mu     sync.Mutex
	links  map[string]*linkSlot
	claims map[string]claim
	tick   uint64 // use counter for link eviction

	claimMu sync.Mutex // serialises put-token calls
}

// linkCloser is a cached link: an rpcLink, a sendLink or a receiveLink.
type linkCloser interface {
	close()
}

// linkSlot holds a cached link, or the creation of one in progress.
type linkSlot struct {
	ready chan struct{}
	link  linkCloser
	err   error
	used  uint64 // connection.tick of the last use, under connection.mu
}

// Dial connects to the endpoint of cfg.Conn and returns a connected client.
// A Service Bus endpoint is authorized lazily, per entity, when an
// operation first needs it; the connection itself is checked here.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	cfg = cfg.normalize()
	c := &Client{
		cfg:    cfg,
		clock:  cfg.Clock,
		log:    cfg.Logger,
		counts: make(map[string]countsAt),
		kick:   make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	c.locks.init()
	c.sessions.init()
	if cfg.Conn.Host == "" {
		return nil, invalid("no endpoint: the host name is missing")
	}
	if cfg.Conn.WebSockets && !cfg.serviceBus() {
		return nil, broker.Errorf(broker.CodeInvalid, "AMQP over WebSockets needs a Service Bus endpoint, not an amqp:// URL")
	}
	if cfg.serviceBus() {
		ts, err := newTokenSource(cfg)
		if err != nil {
			return nil, err
		}
		c.tokens = ts
		c.admin = newAdminClient(c)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	cn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	if c.tokens != nil && cfg.Conn.EntityPath != "" {
		// Fail early on a credential the endpoint refuses.
		if err := c.ensureClaim(ctx, cn, cfg.Conn.EntityPath); err != nil {
			closeConn(cn)
			return nil, err
		}
	}
	c.conn = cn
	c.wg.Add(2)
	go c.supervise(cn)
	go c.refreshLoop()
	return c, nil
}

// dial opens one AMQP connection.
func (c *Client) dial(ctx context.Context) (*connection, error) {
	cs := c.cfg.Conn
	opts := &amqp.ConnOptions{
		ContainerID: c.cfg.ContainerID,
		HostName:    cs.Host,
		MaxSessions: 65535,
		Properties:  map[string]any{"product": "peeklock"},
	}
	var conn *amqp.Conn
	var err error
	if cs.WebSockets {
		opts.SASLType = amqp.SASLTypeAnonymous()
		nc, werr := c.dialWebSocket(ctx)
		if werr != nil {
			return nil, c.dialErr(werr)
		}
		if conn, err = amqp.NewConn(ctx, nc, opts); err != nil {
			_ = nc.Close()
			return nil, c.dialErr(err)
		}
	} else {
		scheme := "amqp://"
		if cs.TLS {
			scheme = "amqps://"
			opts.TLSConfig = c.tlsConfig()
		}
		switch {
		case cs.Kind == KindGeneric && cs.User != "":
			opts.SASLType = amqp.SASLTypePlain(cs.User, cs.Password)
		default:
			opts.SASLType = amqp.SASLTypeAnonymous()
		}
		if conn, err = amqp.Dial(ctx, scheme+cs.Address(), opts); err != nil {
			return nil, c.dialErr(err)
		}
	}
	if !c.cfg.serviceBus() {
		c.notRabbit.Store(!isRabbitMQ(conn.Properties()))
	}
	c.mu.Lock()
	c.gen++
	gen := c.gen
	c.mu.Unlock()
	return &connection{gen: gen, amqp: conn, links: make(map[string]*linkSlot), claims: make(map[string]claim)}, nil
}

// dialErr describes a failed dial without secrets.
func (c *Client) dialErr(err error) error {
	where := c.cfg.Conn.Address()
	if c.cfg.Conn.WebSockets {
		where = c.cfg.Conn.WebSocketURL()
	}
	e := mapErr(err, "connect to "+where, "")
	if be, ok := e.(*broker.Error); ok {
		if be.Code == broker.CodeUnknown || be.Code == broker.CodeTimeout {
			be.Code = broker.CodeConnectionLost
		}
		be.Message = "cannot connect to " + where + ": " + err.Error()
	}
	return e
}

// closeConn closes a connection and every link on it.
func closeConn(cn *connection) {
	cn.mu.Lock()
	slots := cn.links
	cn.links = map[string]*linkSlot{}
	cn.mu.Unlock()
	for _, s := range slots {
		select {
		case <-s.ready:
			if s.link != nil {
				go s.link.close()
			}
		default:
		}
	}
	_ = cn.amqp.Close()
}

// supervise waits for the connection to drop and then reconnects with
// backoff until the client closes.
func (c *Client) supervise(cn *connection) {
	defer c.wg.Done()
	for {
		select {
		case <-c.done:
			return
		case <-cn.amqp.Done():
		}
		err := cn.amqp.Err()
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return
		}
		c.conn = nil
		c.attempt = 1
		c.lastErr = err
		c.mu.Unlock()
		lost := c.locks.loseConnection(cn.gen, c.cfg.serviceBus())
		lostSessions := c.sessions.loseConnection(cn.gen)
		c.log.Warn("connection dropped", "err", err, "locks lost", lost, "session locks lost", lostSessions)
		closeConn(cn)
		cn = c.reconnect()
		if cn == nil {
			return
		}
	}
}

// reconnect dials until it succeeds or the client closes (nil).
func (c *Client) reconnect() *connection {
	wait := c.cfg.MinBackoff
	for {
		select {
		case <-c.done:
			return nil
		case <-c.clock.After(wait):
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeout)
		cn, err := c.dial(ctx)
		cancel()
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			if cn != nil {
				closeConn(cn)
			}
			return nil
		}
		if err == nil {
			c.conn, c.attempt, c.lastErr = cn, 0, nil
			c.mu.Unlock()
			c.log.Info("reconnected", "endpoint", c.cfg.Conn.Address())
			c.kickRefresher()
			return cn
		}
		c.attempt++
		c.lastErr = err
		c.mu.Unlock()
		wait *= 2
		if wait > c.cfg.MaxBackoff {
			wait = c.cfg.MaxBackoff
		}
	}
}

// currentConn returns the live connection, or nil.
func (c *Client) currentConn() *connection {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn
}

// connFor returns the live connection, or an error that says why there is
// none: closed, or reconnecting (attempt N).
func (c *Client) connFor(op, entity string) (*connection, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, &broker.Error{Code: broker.CodeClosed, Message: op + ": the client is closed", Entity: entity}
	}
	if c.conn == nil {
		msg := fmt.Sprintf("%s: %s", op, c.stateLocked())
		if c.lastErr != nil {
			msg += ": " + c.lastErr.Error()
		}
		return nil, &broker.Error{Code: broker.CodeConnectionLost, Message: msg, Entity: entity}
	}
	return c.conn, nil
}

// State returns "connected", "reconnecting (attempt N)" or "closed".
func (c *Client) State() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stateLocked()
}

func (c *Client) stateLocked() string {
	switch {
	case c.closed:
		return StateClosed
	case c.conn == nil:
		return fmt.Sprintf("reconnecting (attempt %d)", c.attempt)
	}
	return StateConnected
}

// Notice returns a remark the dashboard should show, such as counts being
// unavailable because the credential lacks Manage rights; "" when none.
func (c *Client) Notice() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.notice
}

func (c *Client) setNotice(s string) {
	c.mu.Lock()
	c.notice = s
	c.mu.Unlock()
}

// Endpoint describes the endpoint, its state and any notice, for the status
// bar. It never shows a secret.
func (c *Client) Endpoint() string {
	cs := c.cfg.Conn
	var s string
	switch cs.Kind {
	case KindGeneric:
		s = "AMQP 1.0 " + cs.Redacted()
	case KindEmulator:
		s = "Service Bus emulator " + cs.Address()
	default:
		s = "Azure Service Bus " + cs.Host
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s += " (" + c.stateLocked() + ")"
	if c.notice != "" {
		s += " — " + c.notice
	}
	return s
}

// Close gives back the message locks this client still holds (released, so
// no delivery counts as failed), within closeGiveBackTimeout, and closes
// the connection: on Service Bus a message lock outlives its connection and
// would otherwise stay until it expires. Session locks end with the
// connection.
func (c *Client) Close() error {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeGiveBackTimeout)
	for _, t := range c.locks.tokens() {
		_ = c.Settle(ctx, broker.Settlement{Kind: broker.Release, Token: t})
	}
	cancel()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	cn := c.conn
	c.conn = nil
	close(c.done)
	c.mu.Unlock()
	if cn != nil {
		c.locks.loseConnection(cn.gen, false)
		c.sessions.loseConnection(cn.gen)
		closeConn(cn)
	}
	c.wg.Wait()
	return nil
}

// opCtx bounds an operation by the configured timeout.
func (c *Client) opCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.cfg.Timeout)
}

// link returns the cached link under key on cn, creating it with create if
// needed; concurrent callers share one creation.
func (c *Client) link(ctx context.Context, cn *connection, key string, create func(context.Context) (linkCloser, error)) (linkCloser, error) {
	cn.mu.Lock()
	cn.tick++
	s, ok := cn.links[key]
	if !ok {
		s = &linkSlot{ready: make(chan struct{})}
		cn.links[key] = s
	}
	s.used = cn.tick
	var evicted []evictee
	if !ok {
		evicted = cn.evictLocked(key)
	}
	cn.mu.Unlock()
	for _, e := range evicted {
		if rl, isRecv := e.link.(*receiveLink); isRecv {
			c.locks.loseLink(rl, c.cfg.serviceBus())
		}
		go e.link.close()
	}
	if ok {
		select {
		case <-s.ready:
			if s.err != nil {
				return nil, s.err
			}
			return s.link, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	l, err := create(ctx)
	s.link, s.err = l, err
	close(s.ready)
	if err != nil {
		cn.mu.Lock()
		if cn.links[key] == s {
			delete(cn.links, key)
		}
		cn.mu.Unlock()
		return nil, err
	}
	return l, nil
}

// maxCachedLinks bounds the links (each on its own session) cached per
// connection, so that a dashboard that visits many entities stays under
// the endpoint's session limit (peeklock serve allows 256, Azure 5,000).
const maxCachedLinks = 96

// evictee is a cached link pushed out of the cache.
type evictee struct {
	key  string
	link linkCloser
}

// evictLocked removes the least recently used ready links while the cache
// is over maxCachedLinks, sparing keep, the $cbs link and shared sessions.
func (cn *connection) evictLocked(keep string) []evictee {
	var out []evictee
	for len(cn.links) > maxCachedLinks {
		oldest, oldKey := uint64(0), ""
		for k, s := range cn.links {
			if k == keep || k == "rpc|$cbs" || strings.HasPrefix(k, "session|") {
				continue
			}
			select {
			case <-s.ready:
			default:
				continue // still being created
			}
			if s.link != nil && (oldKey == "" || s.used < oldest) {
				oldest, oldKey = s.used, k
			}
		}
		if oldKey == "" {
			break
		}
		out = append(out, evictee{oldKey, cn.links[oldKey].link})
		delete(cn.links, oldKey)
	}
	return out
}

// adopt puts a link made outside the cache (a session receiver, whose key
// is known only once it attached) into it; false when the key is taken.
func (cn *connection) adopt(key string, l linkCloser) bool {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if _, ok := cn.links[key]; ok {
		return false
	}
	cn.tick++
	s := &linkSlot{ready: make(chan struct{}), link: l, used: cn.tick}
	close(s.ready)
	cn.links[key] = s
	return true
}

// dropLink forgets a broken link so that the next operation makes a new
// one, and closes it.
func (c *Client) dropLink(cn *connection, key string, l linkCloser) {
	cn.mu.Lock()
	if s, ok := cn.links[key]; ok && s.link == l {
		delete(cn.links, key)
	}
	cn.mu.Unlock()
	go l.close()
}

// linkAlive reports whether l is still the cached link under key.
func (c *Client) linkAlive(cn *connection, key string, l linkCloser) bool {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	s, ok := cn.links[key]
	return ok && s.link == l
}
