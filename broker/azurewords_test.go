package broker

import "testing"

func TestAzureWords(t *testing.T) {
	for _, tc := range []struct {
		kind EntityKind
		path string
		want string
	}{
		{KindQueue, "q", "ns:Queue:q"},
		{KindTopic, "t", "ns:Topic:t"},
		{KindSubscription, "t/Subscriptions/s", "ns:Topic:t|s"},
		{KindSubscription, "t/Subscriptions/s/Rules/r", "ns:Topic:t|s|r"},
	} {
		if got := EntityRef("ns", tc.kind, tc.path); got != tc.want {
			t.Errorf("EntityRef(%v, %q) = %q, want %q", tc.kind, tc.path, got, tc.want)
		}
	}
	if got, want := ExistsMessage("ns:Topic:t|s|ruleName"), "The messaging entity 'ns:Topic:t|s|ruleName' already exists."; got != want {
		t.Errorf("ExistsMessage = %q, want %q", got, want)
	}
	if got, want := NotFoundMessage("q"), "The messaging entity 'q' could not be found."; got != want {
		t.Errorf("NotFoundMessage = %q, want %q", got, want)
	}
}
