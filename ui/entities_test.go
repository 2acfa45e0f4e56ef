package ui

import (
	"testing"

	"github.com/peeklock/peeklock/broker"
)

// TestNameCellStatusMarker: an entity whose status refuses operations has
// its marker after the name, whole, while the name keeps four cells; a
// narrower cell shows the name alone.
func TestNameCellStatusMarker(t *testing.T) {
	e := func(path string, st broker.EntityStatus) broker.Entity {
		return broker.Entity{Path: path, Settings: broker.EntitySettings{Status: st}}
	}
	for _, c := range []struct {
		ent  broker.Entity
		w    int
		want string
	}{
		{e("orders", broker.StatusActive), 10, "orders    "},
		{e("orders", broker.StatusDisabled), 12, "orders   off"},
		{e("orders", broker.StatusSendDisabled), 10, "orders !tx"},
		{e("orders", broker.StatusReceiveDisabled), 8, "ord… !rx"},
		{e("orders", broker.StatusReceiveDisabled), 7, "orders "},
		{e("t/Subscriptions/s", broker.StatusDisabled), 9, " └ s  off"},
	} {
		if got := nameCell(c.ent, c.w); got != c.want {
			t.Errorf("nameCell(%s %s, %d) = %q, want %q", c.ent.Path, c.ent.Settings.Status, c.w, got, c.want)
		}
	}
}
