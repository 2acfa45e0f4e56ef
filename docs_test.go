package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestArchitectureLinksExist keeps docs/architecture.md true to the tree:
// every file or package it links to exists (a move or a rename that
// forgets the page fails here).
func TestArchitectureLinksExist(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	links := regexp.MustCompile(`\]\((\.\./[^)#]+)\)`).FindAllStringSubmatch(string(b), -1)
	if len(links) < 20 {
		t.Fatalf("only %d links in docs/architecture.md", len(links))
	}
	for _, l := range links {
		if _, err := os.Stat(filepath.Join("docs", l[1])); err != nil {
			t.Errorf("docs/architecture.md links to %s: %v", l[1], err)
		}
	}
}
