package emulatorconfig

import "testing"

// lineColumn names the line and column (in bytes, from 1) of an offset, as
// a syntax error reports them.
func TestLineColumn(t *testing.T) {
	b := []byte("ab\ncd\n\nef")
	for _, c := range []struct{ n, line, col int }{{0, 1, 1}, {1, 1, 2}, {2, 1, 3}, {3, 2, 1}, {6, 3, 1}, {7, 4, 1}, {9, 4, 3}, {99, 4, 3}, {-1, 1, 1}} {
		if l, col := lineColumn(b, c.n); l != c.line || col != c.col {
			t.Errorf("lineColumn(%d) = %d:%d, want %d:%d", c.n, l, col, c.line, c.col)
		}
	}
}
