package engine

import (
	"strings"
	"testing"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine/store"
)

// TestEntityNamesAsServiceBusAllows refuses, on every path that creates or
// updates an entity, names and forward targets that Service Bus has no
// such entity for: dot segments ("a/../b" would be "b" to anyone who
// resolves it), characters outside letters, digits, '.', '-', '_' and '/'
// (a %-escape included: "wq/%2e%2e/secret2"), and more than 260
// characters.
func TestEntityNamesAsServiceBusAllows(t *testing.T) {
	forEachStore(t, func(t *testing.T, newStore func() store.Store) {
		f := newFixture(t, newStore())
		f.queue("q", broker.EntitySettings{})
		if err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "t", Kind: broker.KindTopic}); err != nil {
			t.Fatal(err)
		}
		badPaths := map[string]string{
			"a/../b":                         `no segment between slashes may be empty, "." or ".."`,
			"a/./b":                          `no segment between slashes may be empty, "." or ".."`,
			"a/..":                           "is not valid",
			"wq/%2e%2e/secret2":              "use letters, digits",
			"a//b":                           `no segment between slashes may be empty`,
			"../etc":                         "is not valid",
			strings.Repeat("a", 261):         "at most 260",
			"t/../x/Subscriptions/s":         `no segment`,
			"ok/" + strings.Repeat("b", 258): "at most 260",
		}
		for p, want := range badPaths {
			kind := broker.KindQueue
			if strings.Contains(p, "/Subscriptions/") {
				kind = broker.KindSubscription
			}
			err := f.e.CreateEntity(f.ctx, broker.Entity{Path: p, Kind: kind})
			if be := wantCode(t, err, broker.CodeInvalid); !strings.Contains(be.Message, want) {
				t.Errorf("create %.40q: %q, want it to say %q", p, be.Message, want)
			}
		}
		for _, to := range []string{"../../etc", "q/../x", "a/./q", "x/%2e%2e", "q/$DeadLetterQueue"} {
			for _, s := range []broker.EntitySettings{{ForwardTo: to}, {ForwardDeadLetteredMessagesTo: to}} {
				err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "fwd", Kind: broker.KindQueue, Settings: s})
				wantCode(t, err, broker.CodeInvalid)
				err = f.e.UpdateEntity(f.ctx, broker.Entity{Path: "q", Kind: broker.KindQueue, Settings: s})
				wantCode(t, err, broker.CodeInvalid)
				err = f.e.CreateEntity(f.ctx, broker.Entity{Path: "t/Subscriptions/fwd", Kind: broker.KindSubscription, Settings: s})
				wantCode(t, err, broker.CodeInvalid)
			}
		}
		ents, err := f.e.Entities(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != 2 {
			t.Fatalf("entities %+v, want q and t only", ents)
		}
		// Names Service Bus allows still work.
		for _, p := range []string{"a.b/c-d/e_f", "x/y", strings.Repeat("n", 260)} {
			if err := f.e.CreateEntity(f.ctx, broker.Entity{Path: p, Kind: broker.KindQueue}); err != nil {
				t.Errorf("create %.40q: %v", p, err)
			}
		}
		if err := f.e.CreateEntity(f.ctx, broker.Entity{Path: "fwd", Kind: broker.KindQueue, Settings: broker.EntitySettings{ForwardTo: "a.b/c-d/e_f"}}); err != nil {
			t.Errorf("forward to a nested name: %v", err)
		}
	})
}

func TestConfigRefusesDotSegments(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`{"UserConfig":{"Namespaces":[{"Name":"n","Queues":[{"Name":"a/../b"}]}]}}`, `the queue name "a/../b" is not valid: no segment`},
		{`{"UserConfig":{"Namespaces":[{"Name":"n","Queues":[{"Name":"q","Properties":{"ForwardTo":"../../etc"}}]}]}}`, `ForwardTo "../../etc" does not name a queue or topic`},
	} {
		_, err := parseAndCheck([]byte(c.json))
		if be := wantCode(t, err, broker.CodeInvalid); !strings.Contains(be.Message, c.want) {
			t.Errorf("emulatorconfig.Parse(%s):\n got %q\nwant it to contain %q", c.json, be.Message, c.want)
		}
	}
}
