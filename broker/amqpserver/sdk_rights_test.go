package amqpserver

import (
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sas"
)

// TestSDKKeyRights: a key limited to Send cannot receive or peek, one
// limited to Listen cannot send or schedule, and each is told in Service
// Bus's words, which the SDK maps to CodeUnauthorizedAccess; what a key may
// do still works.
func TestSDKKeyRights(t *testing.T) {
	env := newEnv(t, engineOpts(), Options{
		Keys:      map[string]string{DefaultKeyName: DefaultKey, "SendOnly": "s3nd", "ListenOnly": "l1sten"},
		KeyRights: map[string]sas.Rights{"SendOnly": sas.Send, "ListenOnly": sas.Listen},
	})
	env.queue("q", broker.EntitySettings{})
	ctx := testCtx(t, 30*time.Second)
	refused := func(what string, err error, claim string) {
		t.Helper()
		want := "Unauthorized access. '" + claim + "' claim(s) are required to perform this operation"
		if sbCode(err) != azservicebus.CodeUnauthorizedAccess || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %v; want unauthorized access with %q", what, err, want)
		}
	}

	sendOnly := env.clientWith("SendOnly", "s3nd")
	snd, err := sendOnly.NewSender("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("m")}, nil); err != nil {
		t.Fatalf("send with a Send key: %v", err)
	}
	rcv, err := sendOnly.NewReceiverForQueue("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = rcv.ReceiveMessages(ctx, 1, nil)
	refused("receive with a Send key", err, "Listen")
	_, err = rcv.PeekMessages(ctx, 1, nil)
	refused("peek with a Send key", err, "Listen")

	listenOnly := env.clientWith("ListenOnly", "l1sten")
	lsnd, err := listenOnly.NewSender("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	err = lsnd.SendMessage(ctx, &azservicebus.Message{Body: []byte("m")}, nil)
	refused("send with a Listen key", err, "Send")
	lrcv, err := listenOnly.NewReceiverForQueue("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := lrcv.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("receive with a Listen key: %v, %v", msgs, err)
	}
	if err := lrcv.CompleteMessage(ctx, msgs[0], nil); err != nil {
		t.Fatalf("complete with a Listen key: %v", err)
	}
	if n := env.counts("q"); n.Active+n.Locked != 0 {
		t.Fatalf("counts %+v", n)
	}
}
