package amqpserver

import "time"

// The log budget of what a peer can cause again and again (refused links
// and tokens, its own errors, refused connections): a burst, then one line
// per interval; the lines held back are counted in the next line let
// through, and in one line when the connection ends.
const (
	peerLogBurst    = 10
	peerLogInterval = 6 * time.Second
)

// logPeer logs, at Info and within the connection's budget, a line that
// the peer can cause; client-supplied values in args must be clipped
// (logsafe.Clip) by the caller.
func (c *conn) logPeer(msg string, args ...any) {
	ok, held := c.noisy.Allow(c.clock.Now())
	if !ok {
		return
	}
	if held > 0 {
		args = append(args, "suppressed", held)
	}
	c.log.Info(msg, args...)
}

// logRefusal logs, at Warn and within the listener's budget, a connection
// refused or closed on arrival.
func (s *Server) logRefusal(msg string, args ...any) {
	ok, held := s.noisy.Allow(s.opts.Clock.Now())
	if !ok {
		return
	}
	if held > 0 {
		args = append(args, "suppressed", held)
	}
	s.log.Warn(msg, args...)
}
