package admin

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/internal/logsafe"
	"github.com/peeklock/peeklock/broker/atom"
)

// statusOf maps a broker error code to the HTTP status Service Bus answers.
func statusOf(code broker.Code) int {
	switch code {
	case broker.CodeNotFound, broker.CodeMessageNotFound:
		return http.StatusNotFound
	case broker.CodeAlreadyExists:
		return http.StatusConflict
	case broker.CodeInvalid, broker.CodeNotSupported:
		return http.StatusBadRequest
	case broker.CodeUnauthorized:
		return http.StatusUnauthorized
	case broker.CodeQuotaExceeded:
		return http.StatusForbidden
	case broker.CodeServerBusy, broker.CodeClosed:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// writeError answers with err as Service Bus does: the status of its code
// and an <Error> body whose Detail ends with a tracking id (the error's own,
// or a new one), the resource and the time.
func (h *handler) writeError(w http.ResponseWriter, r *http.Request, resource string, err error) {
	h.writeErrorStatus(w, r, resource, 0, err)
}

// writeErrorStatus is writeError with a given status (0: the code's).
func (h *handler) writeErrorStatus(w http.ResponseWriter, r *http.Request, resource string, status int, err error) {
	var be *broker.Error
	if !errors.As(err, &be) {
		be = &broker.Error{Code: broker.CodeUnknown, Message: err.Error()}
	}
	id := be.TrackingID
	if id == "" {
		id = uuid.NewString()
	}
	if status == 0 {
		status = statusOf(be.Code)
	}
	msg := be.Message
	if msg == "" {
		msg = be.Code.String()
	}
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	detail := msg + " TrackingId:" + id + ", SystemTracker:" + h.hostOf(r) + ":" + resource +
		", Timestamp:" + h.clock.Now().UTC().Format(time.RFC3339)
	if ok, held := h.noisy.Allow(h.clock.Now()); ok {
		args := []any{"method", logsafe.Clip(r.Method), "path", logsafe.Clip(r.URL.Path), "status", status,
			"error", logsafe.Clip(msg), "trackingId", id}
		if held > 0 {
			args = append(args, "suppressed", held)
		}
		h.log.Info("admin request failed", args...)
	}
	w.Header().Set("Content-Type", atom.ContentTypeError)
	w.WriteHeader(status)
	_, _ = w.Write(atom.Error{Code: status, Detail: detail}.Marshal())
}

// unauthorized is the error of a request without a usable token.
func unauthorized(format string, args ...any) error {
	return broker.Errorf(broker.CodeUnauthorized, format, args...)
}

// errMessage returns the message of a broker error without its code
// prefix, or the error's text.
func errMessage(err error) string {
	var be *broker.Error
	if errors.As(err, &be) && be.Message != "" {
		return be.Message
	}
	return err.Error()
}
