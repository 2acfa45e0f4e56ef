package broker

import "testing"

func TestSplitAddressSubQueues(t *testing.T) {
	for _, c := range []struct {
		addr, path string
		sub        SubQueue
	}{
		{"q", "q", SubQueueMain},
		{"q/$DeadLetterQueue", "q", SubQueueDeadLetter},
		{"q/$deadletterqueue", "q", SubQueueDeadLetter},
		{"q/$Transfer/$DeadLetterQueue", "q", SubQueueTransferDeadLetter},
		{"t/Subscriptions/s/$transfer/$DEADLETTERQUEUE", "t/Subscriptions/s", SubQueueTransferDeadLetter},
		{"$Transfer/$DeadLetterQueue", "$Transfer", SubQueueDeadLetter},
		{"/$Transfer/$DeadLetterQueue", "/$Transfer", SubQueueDeadLetter},
		{"q/$Transfer", "q/$Transfer", SubQueueMain},
	} {
		path, sub := SplitAddress(c.addr)
		if path != c.path || sub != c.sub {
			t.Errorf("SplitAddress(%q) = %q, %v; want %q, %v", c.addr, path, sub, c.path, c.sub)
		}
	}
	for _, sub := range []SubQueue{SubQueueMain, SubQueueDeadLetter, SubQueueTransferDeadLetter} {
		if path, got := SplitAddress(SubQueueAddress("orders", sub)); path != "orders" || got != sub {
			t.Errorf("SplitAddress(SubQueueAddress(orders, %v)) = %q, %v", sub, path, got)
		}
	}
	if got := SubQueueAddress("q", SubQueueTransferDeadLetter); got != "q/$Transfer/$DeadLetterQueue" {
		t.Errorf("transfer dead-letter address = %q", got)
	}
	if got := SubQueueTransferDeadLetter.String(); got != "transfer dead-letter sub-queue" {
		t.Errorf("String = %q", got)
	}
	if got := SubQueue(9).Suffix(); got != "" {
		t.Errorf("unknown sub-queue suffix = %q", got)
	}
}

func TestCountsDeadLetteredIncludesTransfer(t *testing.T) {
	n := Counts{Active: 1, DeadLettered: 2, TransferDeadLettered: 3}
	if got := n.Count(CategoryDeadLettered); got != 5 {
		t.Fatalf("Count(Dead-lettered) = %d, want 5", got)
	}
}

func TestCopyForSendClearsSubQueue(t *testing.T) {
	m := &Message{MessageID: "a", SubQueue: SubQueueTransferDeadLetter,
		ApplicationProperties: map[string]any{PropDeadLetterReason: ReasonEntityNotFound, "k": "v"}}
	c := m.CopyForSend()
	if c.SubQueue != SubQueueMain || c.DeadLetterReason() != "" || c.ApplicationProperties["k"] != "v" {
		t.Fatalf("copy: sub-queue %v reason %q properties %v", c.SubQueue, c.DeadLetterReason(), c.ApplicationProperties)
	}
	if m.SubQueue != SubQueueTransferDeadLetter {
		t.Fatal("the original changed")
	}
}
