package broker_test

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// sessionFake is a client with sessions whose state reads "st".
type sessionFake struct {
	broker.Client
	locked bool
}

func (f *sessionFake) Capabilities() broker.Capabilities {
	return broker.Capabilities{Has: broker.AllCapabilities}
}

func (f *sessionFake) LockSession(context.Context, string, string, time.Duration) (broker.SessionLock, error) {
	f.locked = true
	return broker.SessionLock{}, nil
}

func (f *sessionFake) ReceiveFromSession(context.Context, string, broker.ReceiveRequest) ([]*broker.Message, error) {
	return nil, nil
}

func (f *sessionFake) ReceiveDeferredFromSession(context.Context, string, string, []int64) ([]*broker.Message, error) {
	f.locked = true
	return nil, nil
}

func (f *sessionFake) RenewSession(context.Context, string, string) (time.Time, error) {
	return time.Time{}, nil
}

func (f *sessionFake) UnlockSession(context.Context, string, string) error { return nil }

func (f *sessionFake) SessionState(context.Context, string, string) ([]byte, error) {
	return []byte("st"), nil
}

// A read-only client refuses every session operation that changes something
// and passes reading the state through.
func TestReadOnlySessions(t *testing.T) {
	ctx := context.Background()
	inner := &sessionFake{}
	sc, ok := broker.SessionsOf(broker.ReadOnly(inner))
	if !ok {
		t.Fatal("read-only wrapper hides sessions")
	}
	want := map[string]error{}
	_, want["accept session is not allowed in read-only mode"] = sc.LockSession(ctx, "q", "", 0)
	_, want["receive is not allowed in read-only mode"] = sc.ReceiveFromSession(ctx, "A", broker.ReceiveRequest{Entity: "q", Max: 1})
	_, want["receive deferred is not allowed in read-only mode"] = sc.ReceiveDeferredFromSession(ctx, "q", "A", []int64{1})
	_, want["renew session lock is not allowed in read-only mode"] = sc.RenewSession(ctx, "q", "A")
	want["release session lock is not allowed in read-only mode"] = sc.UnlockSession(ctx, "q", "A")
	for msg, err := range want {
		var be *broker.Error
		if !errors.As(err, &be) || be.Code != broker.CodeReadOnly || be.Message != msg {
			t.Errorf("got %v, want read-only %q", err, msg)
		}
	}
	if inner.locked {
		t.Error("the lock reached the endpoint")
	}
	if st, err := sc.SessionState(ctx, "q", "A"); err != nil || string(st) != "st" {
		t.Errorf("state = %q, %v", st, err)
	}
}

// SequenceLockerOf finds the read-only wrapper's own refusal, never the
// wrapped client's implementation under it.
func TestReadOnlySequenceLockerRefuses(t *testing.T) {
	inner := &recorder{}
	sl, ok := broker.SequenceLockerOf(broker.ReadOnly(inner))
	if !ok {
		t.Fatal("no sequence locker through the read-only wrapper")
	}
	if _, err := sl.LockSequence(context.Background(), "q/$DeadLetterQueue", []int64{3}); !errors.Is(err, broker.ErrReadOnly) || inner.calls != 0 {
		t.Fatalf("LockSequence through ReadOnly: %v, %d calls reached the endpoint", err, inner.calls)
	}
	if _, ok := broker.SequenceLockerOf(&noSessions{}); ok {
		t.Fatal("a client without LockSequence has a sequence locker")
	}
}

// A client without CanSessions is no session client, wrapped or not.
func TestSessionsOfNeedsCapability(t *testing.T) {
	inner := &noSessions{sessionFake{}}
	if _, ok := broker.SessionsOf(inner); ok {
		t.Error("SessionsOf ignores the capability")
	}
	if _, ok := broker.SessionsOf(broker.ReadOnly(inner)); ok {
		t.Error("SessionsOf ignores the capability through ReadOnly")
	}
}

type noSessions struct{ sessionFake }

func (n *noSessions) Capabilities() broker.Capabilities {
	return broker.Capabilities{Has: broker.AllCapabilities &^ broker.CanSessions}
}

// recorder implements every interface ReadOnly forwards and counts the
// calls that reach it.
//
// LockSequence reaches the endpoint only if ReadOnly passes it through.
type recorder struct {
	sessionFake
	calls int
}

func (r *recorder) Endpoint() string { r.calls++; return "e" }
func (r *recorder) Entities(context.Context) ([]broker.Entity, error) {
	r.calls++
	return nil, nil
}
func (r *recorder) Browse(context.Context, broker.BrowseRequest) ([]*broker.Message, error) {
	r.calls++
	return nil, nil
}
func (r *recorder) Events() (<-chan broker.Event, func()) { r.calls++; return nil, func() {} }
func (r *recorder) Close() error                          { r.calls++; return nil }
func (r *recorder) State() string                         { r.calls++; return "connected" }
func (r *recorder) Notice() string                        { r.calls++; return "" }
func (r *recorder) Clients(context.Context) ([]broker.ClientConn, error) {
	r.calls++
	return []broker.ClientConn{{ID: "c1"}}, nil
}

func (r *recorder) History(_ context.Context, entity string, seq int64) (broker.History, error) {
	r.calls++
	return broker.History{Entity: entity, Sequence: seq}, nil
}

func (r *recorder) CloseClient(context.Context, string, string) error {
	r.calls++
	return nil
}

func (r *recorder) LockSequence(context.Context, string, []int64) ([]*broker.Message, error) {
	r.calls++
	return nil, nil
}

// readOnlyPasses are the methods a read-only client lets through; every
// other method of the interfaces it forwards must refuse with CodeReadOnly.
var readOnlyPasses = map[string]bool{
	"Endpoint": true, "Capabilities": true, "Entities": true, "Browse": true, "Events": true,
	"Close": true, "State": true, "Notice": true, "SessionState": true, "Unwrap": true,
	"Clients": true, "History": true, "ActingAs": true,
}

// TestReadOnlyFailsClosed calls every method of every interface the
// read-only wrapper forwards, by reflection: each must be implemented by the
// wrapper itself (nothing embedded passes a new method through), and each
// one that is not a decided pass-through must refuse without reaching the
// endpoint.
func TestReadOnlyFailsClosed(t *testing.T) {
	inner := &recorder{}
	ro := broker.ReadOnly(inner)
	v := reflect.ValueOf(ro)
	for _, it := range readOnlyInterfaces {
		if !v.Type().Implements(it) {
			t.Errorf("the read-only client does not implement %v: decide each of its methods in readonly.go", it)
			continue
		}
		for i := range it.NumMethod() {
			m := it.Method(i)
			if readOnlyPasses[m.Name] {
				continue
			}
			args := make([]reflect.Value, m.Type.NumIn())
			for j := range args {
				args[j] = reflect.Zero(m.Type.In(j))
				if m.Type.In(j) == reflect.TypeFor[context.Context]() {
					args[j] = reflect.ValueOf(context.Background())
				}
			}
			before := inner.calls
			out := v.MethodByName(m.Name).Call(args)
			err, _ := out[len(out)-1].Interface().(error)
			if !errors.Is(err, broker.ErrReadOnly) || inner.calls != before || inner.locked {
				t.Errorf("%v.%s: %v (reached the endpoint: %v); want a read-only refusal", it, m.Name, err, inner.calls != before || inner.locked)
			}
		}
	}
}

// Reading a message's history passes through a read-only wrapper, and a
// client that keeps none is found to keep none through it.
func TestReadOnlyHistory(t *testing.T) {
	hr, ok := broker.HistoryOf(broker.ReadOnly(&recorder{}))
	if !ok {
		t.Fatal("read-only wrapper hides the history")
	}
	if h, err := hr.History(context.Background(), "q", 7); err != nil || h.Sequence != 7 {
		t.Errorf("History = %+v, %v", h, err)
	}
	if _, ok := broker.HistoryOf(broker.ReadOnly(&sessionFake{})); ok {
		t.Error("HistoryOf finds a history in a client without one")
	}
}

// Listing the connected clients passes through a read-only wrapper, and a
// client that lists none is found to have none through it.
func TestReadOnlyClients(t *testing.T) {
	cl, ok := broker.ClientsOf(broker.ReadOnly(&recorder{}))
	if !ok {
		t.Fatal("read-only wrapper hides the clients")
	}
	if got, err := cl.Clients(context.Background()); err != nil || len(got) != 1 || got[0].ID != "c1" {
		t.Errorf("Clients = %v, %v", got, err)
	}
	if _, ok := broker.ClientsOf(broker.ReadOnly(&sessionFake{})); ok {
		t.Error("ClientsOf finds a lister in a client without one")
	}
}

// readOnlyInterfaces are the interfaces whose every method the read-only
// wrapper decides (passes through or refuses) itself.
var readOnlyInterfaces = []reflect.Type{
	reflect.TypeFor[broker.Client](), reflect.TypeFor[broker.SessionClient](),
	reflect.TypeFor[broker.StatusReporter](), reflect.TypeFor[broker.Unwrapper](),
	reflect.TypeFor[broker.ClientLister](), reflect.TypeFor[broker.SequenceLocker](),
	reflect.TypeFor[broker.ClientCloser](), reflect.TypeFor[broker.HistoryReader](),
	reflect.TypeFor[broker.ResubmitRecorder](), reflect.TypeFor[broker.ActorRecorder](),
}

// Naming the caller of a read-only client keeps it read-only.
func TestReadOnlyActingAs(t *testing.T) {
	c := broker.ActingAs(broker.ReadOnly(&recorder{}), "someone")
	if !broker.IsReadOnly(c) {
		t.Fatalf("ActingAs(ReadOnly(c)) is %T, not read-only", c)
	}
	if err := c.Send(context.Background(), "q", nil); !errors.Is(err, broker.ErrReadOnly) {
		t.Errorf("Send = %v; want a read-only refusal", err)
	}
}

// Every method of the read-only wrapper belongs to an interface that
// TestReadOnlyFailsClosed checks: a method added to the wrapper (forwarding
// a new optional interface) without listing its interface there fails here.
func TestReadOnlyMethodsAreDecided(t *testing.T) {
	decided := map[string]bool{}
	for _, it := range readOnlyInterfaces {
		for i := range it.NumMethod() {
			decided[it.Method(i).Name] = true
		}
	}
	rt := reflect.TypeOf(broker.ReadOnly(&recorder{}))
	for i := range rt.NumMethod() {
		if m := rt.Method(i).Name; !decided[m] {
			t.Errorf("the read-only client has method %s of no interface in readOnlyInterfaces: add its interface and decide it in TestReadOnlyFailsClosed", m)
		}
	}
}

// unwrapWalkers are the functions of package broker that look through
// wrappers (Unwrapper) for an optional interface of the wrapped client,
// with the reason each is safe under ReadOnly. A walker finds the wrapped
// client's method under the read-only wrapper, so a new one that finds a
// changing interface would fail open.
var unwrapWalkers = map[string]string{
	"RulesOf":          "RuleReader only reads",
	"ClientsOf":        "ClientLister only reads",
	"HistoryOf":        "HistoryReader only reads",
	"SequenceLockerOf": "ReadOnly implements SequenceLocker itself (refused), found before the wrapped client",
	"ClientCloserOf":   "ReadOnly implements ClientCloser itself (refused), found before the wrapped client",
}

// TestReadOnlyUnwrapWalkers finds, in the package's source, every function
// that calls Unwrap (or lookThrough) to reach a wrapped client, and fails for one whose
// safety under ReadOnly is not decided in unwrapWalkers.
func TestReadOnlyUnwrapWalkers(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || fd.Name.Name == "Unwrap" || fd.Name.Name == "lookThrough" {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Unwrap" && len(call.Args) == 0 {
					found[fd.Name.Name] = true
				}
				if ix, ok := call.Fun.(*ast.IndexExpr); ok {
					if id, ok := ix.X.(*ast.Ident); ok && id.Name == "lookThrough" {
						found[fd.Name.Name] = true
					}
				}
				return true
			})
		}
	}
	for name := range found {
		if _, ok := unwrapWalkers[name]; !ok {
			t.Errorf("%s looks through wrappers with Unwrap: decide in unwrapWalkers whether what it finds is safe under ReadOnly (or make ReadOnly implement that interface itself)", name)
		}
	}
	for name := range unwrapWalkers {
		if !found[name] {
			t.Errorf("unwrapWalkers lists %s, which no longer calls Unwrap or lookThrough", name)
		}
	}
}
