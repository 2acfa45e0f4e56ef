package admin

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	sbadmin "github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"

	"github.com/peeklock/peeklock/broker"
)

// MaxMessageSizeInKilobytes takes the Premium tier's 1024 to 102400 or the
// Standard tier's 256, and refuses any other size in Service Bus's words
// (the JavaScript SDK's live tests look for them), for queues and topics;
// an update may send back the size an entity has.
func TestSDKMaxMessageSizeRange(t *testing.T) {
	f := newFixture(t)
	c := f.sdk()
	const words = "The property value for 'MaxMessageSizeInKilobytes' must be between 1024 and 102400"
	refused := func(what string, err error) {
		t.Helper()
		if statusOfErr(err) != http.StatusBadRequest || !strings.Contains(err.Error(), words) {
			t.Errorf("%s: %v; want 400 with %q", what, err, words)
		}
	}
	for _, kb := range []int64{1, 255, 512, 1023, 102401} {
		_, err := c.CreateQueue(f.ctx, "q", &sbadmin.CreateQueueOptions{Properties: &sbadmin.QueueProperties{MaxMessageSizeInKilobytes: ptr(kb)}})
		refused("CreateQueue with "+strconv.FormatInt(kb, 10), err)
		_, err = c.CreateTopic(f.ctx, "t", &sbadmin.CreateTopicOptions{Properties: &sbadmin.TopicProperties{MaxMessageSizeInKilobytes: ptr(kb)}})
		refused("CreateTopic with "+strconv.FormatInt(kb, 10), err)
	}
	for _, kb := range []int64{256, 1024, 102400} {
		name := "q" + strconv.FormatInt(kb, 10)
		q, err := c.CreateQueue(f.ctx, name, &sbadmin.CreateQueueOptions{Properties: &sbadmin.QueueProperties{MaxMessageSizeInKilobytes: ptr(kb)}})
		if err != nil || *q.MaxMessageSizeInKilobytes != kb {
			t.Errorf("CreateQueue with %d: %v %s", kb, err, dump(q))
		}
		name = "t" + strconv.FormatInt(kb, 10)
		tp, err := c.CreateTopic(f.ctx, name, &sbadmin.CreateTopicOptions{Properties: &sbadmin.TopicProperties{MaxMessageSizeInKilobytes: ptr(kb)}})
		if err != nil || *tp.MaxMessageSizeInKilobytes != kb {
			t.Errorf("CreateTopic with %d: %v %s", kb, err, dump(tp))
		}
	}

	// An entity the configuration declared with another size keeps it when
	// a client sends back what it read, and cannot be given another.
	f.create(broker.Entity{Path: "small", Settings: broker.EntitySettings{MaxMessageSizeInKilobytes: 64}})
	got, err := c.GetQueue(f.ctx, "small", nil)
	if err != nil || *got.MaxMessageSizeInKilobytes != 64 {
		t.Fatalf("GetQueue small: %v %s", err, dump(got))
	}
	got.MaxDeliveryCount = ptr(int32(3))
	if up, err := c.UpdateQueue(f.ctx, "small", got.QueueProperties, nil); err != nil || *up.MaxMessageSizeInKilobytes != 64 || *up.MaxDeliveryCount != 3 {
		t.Fatalf("UpdateQueue sending back 64: %v %s", err, dump(up))
	}
	got.MaxMessageSizeInKilobytes = ptr(int64(65))
	_, err = c.UpdateQueue(f.ctx, "small", got.QueueProperties, nil)
	refused("UpdateQueue to 65", err)
	got.MaxMessageSizeInKilobytes = ptr(int64(2048))
	if up, err := c.UpdateQueue(f.ctx, "small", got.QueueProperties, nil); err != nil || *up.MaxMessageSizeInKilobytes != 2048 {
		t.Fatalf("UpdateQueue to 2048: %v %s", err, dump(up))
	}
}
