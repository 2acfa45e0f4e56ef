package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// readmeRunbooks returns the shell recipes of the README's Runbooks
// section.
func readmeRunbooks(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, "## Runbooks")
	if start < 0 {
		t.Fatal("README.md has no Runbooks section")
	}
	s = s[start+1:]
	if end := strings.Index(s, "\n## "); end >= 0 {
		s = s[:end]
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestReadmeRunbooksWork runs each recipe of the README's Runbooks section
// (with the store of a temporary directory for "-c prod") on a queue with
// four dead letters, and checks what it did. The recipes are shell scripts
// (pipes into jq, $?, command substitution), so bash runs them, with the
// binary on its PATH.
func TestReadmeRunbooksWork(t *testing.T) {
	recipes := readmeRunbooks(t)
	if len(recipes) != 4 {
		t.Fatalf("the Runbooks section has %d recipes, want 4", len(recipes))
	}
	bin := buildBinary(t)
	checks := []func(t *testing.T, dir, out string){
		func(t *testing.T, _, out string) {
			if out != "orders\t4\t0\n" {
				t.Fatalf("dead letters per entity: %q", out)
			}
		},
		func(t *testing.T, dir, _ string) {
			files, _ := filepath.Glob(filepath.Join(dir, "work", "orders-dlq-*.jsonl"))
			e := openStore(t, dir+"/data")
			defer e.Close()
			ent, err := e.Entity(context.Background(), "orders")
			if err != nil || len(files) != 1 || ent.Counts.DeadLettered != 0 || ent.Counts.Active != 4 {
				t.Fatalf("export, purge, import: files %v, counts %+v, %v", files, ent.Counts, err)
			}
		},
		func(t *testing.T, dir, out string) {
			if !strings.HasSuffix(out, "all resubmitted\n") {
				t.Fatalf("resubmit: %q", out)
			}
			e := openStore(t, dir+"/data")
			defer e.Close()
			ent, err := e.Entity(context.Background(), "orders")
			if err != nil || ent.Counts.DeadLettered != 2 || ent.Counts.Active != 2 {
				t.Fatalf("after resubmit: %+v, %v", ent.Counts, err)
			}
		},
		func(t *testing.T, dir, _ string) {
			e := openStore(t, dir+"/data")
			defer e.Close()
			ent, err := e.Entity(context.Background(), "payments")
			if err != nil || ent.Counts.DeadLettered != 1 || ent.Counts.Active != 0 {
				t.Fatalf("after deadletter: %+v, %v", ent.Counts, err)
			}
		},
	}
	for i, recipe := range recipes {
		dir := t.TempDir()
		data := filepath.Join(dir, "data")
		fillReadmeStore(t, data)
		work := filepath.Join(dir, "work")
		os.Mkdir(work, 0o700)
		script := strings.ReplaceAll(recipe, "-c prod", "--data "+data)
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"), "XDG_CONFIG_HOME="+dir)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("recipe %d: %v\n%s\n%s", i+1, err, script, out)
		}
		checks[i](t, dir, string(out))
	}
}

// fillReadmeStore makes queue orders with four dead letters, two of them
// for MaxDeliveryCountExceeded, and queue payments without any.
func fillReadmeStore(t *testing.T, dir string) {
	t.Helper()
	e := openStore(t, dir)
	ctx := context.Background()
	for _, q := range []string{"orders", "payments"} {
		if err := e.CreateEntity(ctx, broker.Entity{Path: q, Kind: broker.KindQueue, Settings: broker.EntitySettings{LockDuration: time.Minute}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		if err := e.Send(ctx, "orders", []*broker.Message{{MessageID: string(rune('a' + i)), Body: []byte("x")}}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := e.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Mode: broker.PeekLock, Max: 4})
	if err != nil || len(got) != 4 {
		t.Fatalf("%d %v", len(got), err)
	}
	for i, m := range got {
		reason := []string{broker.ReasonMaxDeliveryCountExceeded, "Poison"}[i%2]
		if err := e.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "orders", Token: m.LockToken, Reason: reason}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}
