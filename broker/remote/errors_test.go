package remote

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/Azure/go-amqp"

	"github.com/peeklock/peeklock/broker"
)

func TestConditionTable(t *testing.T) {
	const desc = "The lock supplied is invalid. TrackingId:0a1b2c3d_G7, SystemTracker:ns:Queue:q, Timestamp:2025-03-04T05:06:07"
	tests := []struct {
		cond     amqp.ErrCond
		code     broker.Code
		message  string
		tracking string
	}{
		{"com.microsoft:message-lock-lost", broker.CodeLockLost, "The lock supplied is invalid.", "0a1b2c3d_G7"},
		{"com.microsoft:session-lock-lost", broker.CodeSessionLockLost, "The lock supplied is invalid.", "0a1b2c3d_G7"},
		{amqp.ErrCondNotFound, broker.CodeNotFound, "The lock supplied is invalid.", "0a1b2c3d_G7"},
		{"com.microsoft:server-busy", broker.CodeServerBusy, "The lock supplied is invalid.", "0a1b2c3d_G7"},
		{amqp.ErrCondResourceLimitExceeded, broker.CodeQuotaExceeded, "The lock supplied is invalid.", "0a1b2c3d_G7"},
		{amqp.ErrCondMessageSizeExceeded, broker.CodeMessageTooLarge, "The lock supplied is invalid.", "0a1b2c3d_G7"},
		{amqp.ErrCondUnauthorizedAccess, broker.CodeUnauthorized, "The lock supplied is invalid.", "0a1b2c3d_G7"},
		{"com.microsoft:timeout", broker.CodeTimeout, "The lock supplied is invalid.", "0a1b2c3d_G7"},
		{amqp.ErrCondNotImplemented, broker.CodeNotSupported, "The lock supplied is invalid.", "0a1b2c3d_G7"},
		{"com.example:odd", broker.CodeUnknown, "com.example:odd: The lock supplied is invalid.", "0a1b2c3d_G7"},
	}
	for _, tc := range tests {
		err := mapErr(&amqp.Error{Condition: tc.cond, Description: desc}, "complete", "q")
		var be *broker.Error
		if !errors.As(err, &be) {
			t.Fatalf("%s: %T is not a *broker.Error", tc.cond, err)
		}
		if be.Code != tc.code || be.Message != tc.message || be.TrackingID != tc.tracking || be.Entity != "q" {
			t.Fatalf("%s: got code %v message %q tracking %q entity %q", tc.cond, be.Code, be.Message, be.TrackingID, be.Entity)
		}
	}
	// No description: the condition is the message; no tracking id.
	err := mapErr(&amqp.Error{Condition: "com.microsoft:message-lock-lost"}, "complete", "")
	if be := err.(*broker.Error); be.Message != "com.microsoft:message-lock-lost" || be.TrackingID != "" {
		t.Fatalf("bare condition = %+v", be)
	}
}

func TestMapErrTransportAndContext(t *testing.T) {
	tests := []struct {
		err  error
		code broker.Code
	}{
		{context.DeadlineExceeded, broker.CodeTimeout},
		{fmt.Errorf("wrapped: %w", context.Canceled), broker.CodeTimeout},
		{&amqp.ConnError{}, broker.CodeConnectionLost},
		{&amqp.ConnError{RemoteErr: &amqp.Error{Condition: amqp.ErrCondResourceLimitExceeded, Description: "idle"}}, broker.CodeConnectionLost},
		{&amqp.LinkError{RemoteErr: &amqp.Error{Condition: amqp.ErrCondNotFound, Description: "no such queue"}}, broker.CodeNotFound},
		{&amqp.LinkError{}, broker.CodeConnectionLost},
		{&amqp.SessionError{}, broker.CodeConnectionLost},
		{errors.New("odd"), broker.CodeUnknown},
		{broker.ErrLockLost, broker.CodeLockLost},
	}
	for _, tc := range tests {
		if got := broker.CodeOf(mapErr(tc.err, "op", "q")); got != tc.code {
			t.Fatalf("mapErr(%v) code = %v, want %v", tc.err, got, tc.code)
		}
	}
	if mapErr(nil, "op", "q") != nil {
		t.Fatal("mapErr(nil) is not nil")
	}
}

func TestStatusError(t *testing.T) {
	tests := []struct {
		status int
		cond   string
		code   broker.Code
		msg    string
	}{
		{410, "", broker.CodeLockLost, "gone TrackingId:x"},
		{404, "com.microsoft:message-not-found", broker.CodeMessageNotFound, "no message 7"},
		{404, "", broker.CodeNotFound, "no entity"},
		{500, "", broker.CodeUnknown, "renew lock failed with status 500: boom"},
		{401, "amqp:unauthorized-access", broker.CodeUnauthorized, "no token"},
	}
	for _, tc := range tests {
		desc := tc.msg
		if tc.status == 500 {
			desc = "boom"
		}
		e := statusError(tc.status, tc.cond, desc, "renew lock", "q")
		want := tc.msg
		if tc.status == 410 {
			want = "gone"
		}
		if e.Code != tc.code || e.Message != want {
			t.Fatalf("status %d %q: got %v %q, want %v %q", tc.status, tc.cond, e.Code, e.Message, tc.code, want)
		}
	}
}
