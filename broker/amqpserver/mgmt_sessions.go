package amqpserver

import (
	"slices"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/sbamqp"
)

// requiredSession returns the session-id field, which session operations
// need ("" is the empty session).
func (r *mgmtRequest) requiredSession() (string, error) {
	sid, ok, err := r.str(sbamqp.KeySessionID)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", broker.Errorf(broker.CodeInvalid, "the request has no \"session-id\"")
	}
	return sid, nil
}

// renewSessionLock extends a session lock this connection holds:
// session-id -> expiration.
func renewSessionLock(r *mgmtRequest) (*response, error) {
	sid, err := r.requiredSession()
	if err != nil {
		return nil, err
	}
	until, err := r.c.eng.RenewSessionLock(r.ctx, r.c.owner, r.entity, sid)
	if err != nil {
		return nil, err
	}
	return okResponse(map[string]any{sbamqp.KeyExpiration: until}), nil
}

// getSessionState returns the state of a session this connection holds the
// lock of (null when it has none).
func getSessionState(r *mgmtRequest) (*response, error) {
	sid, err := r.requiredSession()
	if err != nil {
		return nil, err
	}
	state, err := r.c.eng.HeldSessionState(r.ctx, r.c.owner, r.entity, sid)
	if err != nil {
		return nil, err
	}
	var v any
	if state != nil {
		v = state
	}
	return okResponse(map[string]any{sbamqp.KeySessionState: v}), nil
}

// setSessionState replaces the state of a session this connection holds
// (null clears it).
func setSessionState(r *mgmtRequest) (*response, error) {
	sid, err := r.requiredSession()
	if err != nil {
		return nil, err
	}
	var state []byte
	if v, ok := r.field(sbamqp.KeySessionState); ok && v != nil {
		b, isBin := v.([]byte)
		if !isBin {
			return nil, missing(sbamqp.KeySessionState, "binary or null", v, true)
		}
		state = append([]byte(nil), b...)
	}
	if err := r.c.eng.SetSessionState(r.ctx, r.c.owner, r.entity, sid, state); err != nil {
		return nil, err
	}
	return okResponse(nil), nil
}

// dateTimeMax is .NET's DateTime.MaxValue to the millisecond of an AMQP
// timestamp: a last-updated-time at or after it asks for every session with
// messages or state (the Go SDK sends the year 10000 to mean that).
var dateTimeMax = time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC)

// getMessageSessions lists a page (skip, top) of the entity's sessions, in
// session id order: without a last-updated-time, or with one at or after
// DateTime.MaxValue, those that have messages or state; with an earlier
// one, those whose state was set after it (a session with messages but no
// state is not listed then), as Service Bus does. 204 when the page is
// empty.
func getMessageSessions(r *mgmtRequest) (*response, error) {
	skip, _, err := r.integer("skip")
	if err != nil {
		return nil, err
	}
	top, ok, err := r.integer("top")
	if err != nil {
		return nil, err
	}
	if !ok || top <= 0 {
		top = maxMessagesPerResponse
	}
	var cutoff time.Time
	switch v, _ := r.field("last-updated-time"); v := v.(type) {
	case nil:
	case time.Time:
		if v.Before(dateTimeMax) {
			cutoff = v
		}
	default:
		return nil, missing("last-updated-time", "a timestamp", v, true)
	}
	infos, err := r.c.eng.Sessions(r.ctx, r.entity)
	if err != nil {
		return nil, err
	}
	infos = slices.DeleteFunc(infos, func(in engine.SessionInfo) bool {
		if cutoff.IsZero() {
			return in.Messages == 0 && !in.HasState
		}
		return !in.HasState || !in.StateUpdated.After(cutoff)
	})
	skip = min(max(skip, 0), int64(len(infos)))
	end := min(skip+top, int64(len(infos)))
	ids := make([]string, 0, end-skip)
	for _, in := range infos[skip:end] {
		ids = append(ids, in.SessionID)
	}
	if len(ids) == 0 {
		return noContent(), nil
	}
	return okResponse(map[string]any{"skip": int32(end), "sessions-ids": ids}), nil
}
