package admin

import (
	"testing"

	sbadmin "github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
)

// TestDotSegmentsRefused: entity names with dot segments, literal or
// %-escaped, and forward targets outside the namespace's names are refused
// with 400 and Service Bus's kind of error, and nothing is created.
func TestDotSegmentsRefused(t *testing.T) {
	f := newFixture(t)
	root := "sb://" + f.host
	q := func(inner string) string {
		return `<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml"><QueueDescription xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect">` + inner + `</QueueDescription></content></entry>`
	}
	for _, tc := range []struct{ path, body, msg, tracker string }{
		{"/a/../b", q(""), `the queue name "a/../b" is not valid: ` + dotRule, "a/../b"},
		{"/wq/%2e%2e/secret2", q(""), `the queue name "wq/../secret2" is not valid: ` + dotRule, "wq/../secret2"},
		{"/q2", q("<ForwardTo>../../etc</ForwardTo>"), `ForwardTo "../../etc" does not name a queue or topic: ` + dotRule, "q2"},
		{"/q2", q("<ForwardDeadLetteredMessagesTo>sb://" + f.host + "/wq/%2e%2e/x</ForwardDeadLetteredMessagesTo>"), `ForwardDeadLetteredMessagesTo "wq/../x" does not name a queue or topic: ` + dotRule, "q2"},
	} {
		status, body, hdr := f.do("PUT", tc.path, root, tc.body, nil)
		checkError(t, status, body, hdr, 400, tc.msg, f.host+":"+tc.tracker)
	}
	ctx := f.ctx
	if _, err := f.sdk().CreateQueue(ctx, "wq/../secret2", nil); statusOfErr(err) != 400 {
		t.Errorf("the SDK's CreateQueue(wq/../secret2): %v", err)
	}
	if _, err := f.sdk().CreateQueue(ctx, "fwd", &sbadmin.CreateQueueOptions{Properties: &sbadmin.QueueProperties{ForwardTo: ptrTo("../../etc")}}); statusOfErr(err) != 400 {
		t.Errorf("the SDK's CreateQueue with ForwardTo ../../etc: %v", err)
	}
	ents, err := f.eng.Entities(ctx)
	if err != nil || len(ents) != 0 {
		t.Fatalf("entities %+v %v, want none", ents, err)
	}
}

const dotRule = `no segment between slashes may be empty, "." or ".."`

func ptrTo[T any](v T) *T { return &v }
