package model

import (
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/ui"
)

// statusLine is what the status bar says of its own, a component: the
// state of the connection, the endpoint's lasting remark, the last error
// and the passing message with the time it was given. The root model sets
// them (setErr, setInfo, the refresh) and fills the rest of ui.Status
// (endpoint, pause, session, zoom) from its own state.
type statusLine struct {
	conn   string // ui.ConnConnected, ui.ConnError, "reconnecting (attempt 3)"…
	notice string // the endpoint's lasting remark (broker.StatusReporter)
	err    error  // the last error, until a passing message replaces it
	info   string // the passing message, shown for infoFor after infoAt
	infoAt time.Time
}

// fail shows err until a passing message replaces it.
func (s *statusLine) fail(err error) { s.err, s.info = err, "" }

// tell shows text from now, for infoFor, and clears the last error.
func (s *statusLine) tell(now time.Time, text string) { s.info, s.infoAt, s.err = text, now, nil }

// view fills in what the status bar says of its own at now.
func (s *statusLine) view(now time.Time, st *ui.Status) {
	st.Conn, st.Notice = s.conn, s.notice
	if now.Sub(s.infoAt) < infoFor {
		st.Info = s.info
	}
	if s.err != nil {
		st.Err = s.err.Error()
		st.TrackingID = broker.TrackingIDOf(s.err)
	}
}
