package sshserver

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver"
)

// An operator session closes an application's connection and the audit log
// says so; a read-only session is refused, audited as refused, and the
// connection stays open.
func TestSessionClientCloseClientAudited(t *testing.T) {
	e := newEngine(t, 0)
	srv, err := amqpserver.New(e, amqpserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := amqp.Dial(ctx, "amqp://"+l.Addr().String(), &amqp.ConnOptions{
		SASLType: amqp.SASLTypePlain(amqpserver.DefaultKeyName, amqpserver.DefaultKey)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var id string
	for id == "" {
		cs, err := e.Clients(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) == 1 {
			id = cs[0].ID
		} else if ctx.Err() != nil {
			t.Fatal("the connection is not listed")
		} else {
			time.Sleep(5 * time.Millisecond)
		}
	}

	var roLog auditLog
	ro := newSessionClient(e, RoleReadOnly, roLog.logger(), "")
	if err := ro.CloseClient(ctx, id, "x"); !errors.Is(err, broker.ErrReadOnly) {
		t.Fatalf("read-only close: %v, want ErrReadOnly", err)
	}
	if lines := roLog.lines(t); len(lines) != 1 || lines[0]["op"] != "close-connection" || lines[0]["connection"] != id ||
		lines[0]["level"] != "WARN" || lines[0]["result"] != "read-only: closing a connection is not allowed in read-only mode" {
		t.Fatalf("read-only audit = %v", lines)
	}
	select {
	case <-conn.Done():
		t.Fatal("a read-only session closed the connection")
	case <-time.After(50 * time.Millisecond):
	}

	var opLog auditLog
	op := newSessionClient(e, RoleOperator, opLog.logger(), "")
	if err := op.CloseClient(ctx, id, "stuck"); err != nil {
		t.Fatal(err)
	}
	if lines := opLog.lines(t); len(lines) != 1 || lines[0]["op"] != "close-connection" || lines[0]["connection"] != id ||
		lines[0]["reason"] != "stuck" || lines[0]["result"] != "ok" {
		t.Fatalf("operator audit = %v", lines)
	}
	select {
	case <-conn.Done():
	case <-ctx.Done():
		t.Fatal("the operator's close did not close the connection")
	}
}
