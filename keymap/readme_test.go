package keymap

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReadmeKeyTable checks the README's key table against DefaultKeyMap:
// every key it shows is bound, and every bound key is shown.
func TestReadmeKeyTable(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, "## Keys")
	if start < 0 {
		t.Fatal("README.md has no Keys section")
	}
	s = s[start:]
	s = s[:strings.Index(s[1:], "\n## ")+1]
	var table []string
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "| `") {
			table = append(table, line)
		}
	}
	shown := map[string]bool{}
	code := regexp.MustCompile("`([^`]+)`")
	for _, line := range table {
		cells := strings.Split(line, "|")
		// Keys are in the first and third cells; the others describe.
		for _, i := range []int{1, 3} {
			if i >= len(cells) {
				continue
			}
			cell := cells[i]
			if strings.Contains(cell, "`1`–`5`") {
				for _, k := range []string{"1", "2", "3", "4", "5"} {
					shown[k] = true
				}
			}
			for _, m := range code.FindAllStringSubmatch(cell, -1) {
				shown[readmeKey(m[1])] = true
			}
		}
	}
	km := DefaultKeyMap()
	bound := map[string]bool{}
	for _, n := range km.All() {
		for _, k := range n.Binding.Keys() {
			bound[k] = true
			if !shown[k] {
				t.Errorf("action %s: key %q is bound but not in the README's key table", n.Action, k)
			}
		}
	}
	var extra []string
	for k := range shown {
		if !bound[k] {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	if len(extra) > 0 {
		t.Errorf("the README's key table shows keys that nothing binds: %q", extra)
	}
}

// readmeKey turns a key as the README writes it into its binding name.
func readmeKey(k string) string {
	switch k {
	case "↑":
		return "up"
	case "↓":
		return "down"
	case "pgdn":
		return "pgdown"
	}
	return k
}
