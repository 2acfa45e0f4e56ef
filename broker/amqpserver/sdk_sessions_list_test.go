package amqpserver

import (
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/peeklock/peeklock/broker"
)

// ListSessions with SessionStateUpdatedAfter (get-message-sessions with a
// real last-updated-time) lists the sessions whose state was set after it,
// never a session with messages only; without it, every session with
// messages or state. A session whose state was cleared has none.
func TestSDKListSessionsStateUpdatedAfter(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{})
	env.queue("s", broker.EntitySettings{RequiresSession: true})
	ctx := testCtx(t, 30*time.Second)
	c := env.client()
	snd, err := c.NewSender("s", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("m"), SessionID: ptr("msg-only")}, nil); err != nil {
		t.Fatal(err)
	}
	setState := func(session string, state []byte) {
		t.Helper()
		r, err := c.AcceptSessionForQueue(ctx, "s", session, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.SetSessionState(ctx, state, nil); err != nil {
			t.Fatal(err)
		}
		if err := r.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	before := time.Now().Add(-time.Minute)
	setState("state-1", []byte("x"))
	setState("state-2", []byte("y"))
	setState("cleared", []byte("z"))
	setState("cleared", nil)
	after := time.Now().Add(time.Minute)

	list := func(opts *azservicebus.ListSessionsOptions) []string {
		t.Helper()
		var ids []string
		for pager := c.NewListSessionsForQueuePager("s", opts); pager.More(); {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, page.Sessions...)
		}
		return ids
	}
	if got := list(&azservicebus.ListSessionsOptions{SessionStateUpdatedAfter: &before}); !slices.Equal(got, []string{"state-1", "state-2"}) {
		t.Errorf("updated after a past time: %v, want the two state sessions", got)
	}
	if got := list(&azservicebus.ListSessionsOptions{SessionStateUpdatedAfter: &after}); len(got) != 0 {
		t.Errorf("updated after a future time: %v, want none", got)
	}
	if got := list(nil); !slices.Equal(got, []string{"msg-only", "state-1", "state-2"}) {
		t.Errorf("default listing: %v, want the sessions with messages or state", got)
	}
}
