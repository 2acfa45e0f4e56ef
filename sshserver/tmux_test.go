package sshserver

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/peeklock/peeklock/broker"
)

// phoneDescription is longer than a phone's screen is wide.
const phoneDescription = "the order's customer.address.postcode 'SW1A 1AA' does not match the schema of version 7 (five digits)"

// TestTmuxOverSSHPhoneReadsWhyDeadLettered is the on-call case at 60×20:
// the OpenSSH client, in a real terminal (tmux) of a phone's size, logs in
// to the dashboard, and 5 then enter show why the message was
// dead-lettered, the reason and the whole description, wrapped.
func TestTmuxOverSSHPhoneReadsWhyDeadLettered(t *testing.T) {
	for _, tool := range []string{"tmux", "ssh"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (apt-get install -y tmux openssh-client)", tool)
		}
	}
	e := newEngine(t, 3)
	ctx := context.Background()
	got, err := e.Receive(ctx, broker.ReceiveRequest{Entity: "orders", Mode: broker.PeekLock, Max: 1})
	if err != nil || len(got) != 1 {
		t.Fatal(err)
	}
	if err := e.Settle(ctx, broker.Settlement{Kind: broker.DeadLetter, Entity: "orders", Token: got[0].LockToken,
		Reason: "SchemaValidationFailed", Description: phoneDescription}); err != nil {
		t.Fatal(err)
	}

	// A key of our own, in a file the OpenSSH client reads.
	dir := t.TempDir()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := gossh.MarshalPrivateKey(priv, "phone")
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	ak := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(ak, []byte(authLine(signer, "phone@oncall")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, e, func(c *Config) {
		c.AuthorizedKeysPath = ak
		c.Roles = map[string]Role{"phone@oncall": RoleOperator}
	})
	port := ts.addr[strings.LastIndex(ts.addr, ":")+1:]

	sock := filepath.Join(dir, "tmux.sock")
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-S", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v: %s", args, err, out)
		}
		return string(out)
	}
	ssh := fmt.Sprintf("ssh -F /dev/null -tt -i %s -p %s -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "+
		"-o LogLevel=ERROR -o BatchMode=yes -o IdentitiesOnly=yes oncall@127.0.0.1", keyFile, port)
	tmux("new-session", "-d", "-s", "phone", "-x", "60", "-y", "20", "env TERM=xterm-256color "+ssh+"; echo ssh exited $?; sleep 30")
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })
	tmux("set-option", "-g", "status", "off")
	tmux("resize-window", "-t", "phone", "-x", "60", "-y", "20")
	if size := strings.TrimSpace(tmux("display-message", "-p", "-t", "phone", "#{pane_width}x#{pane_height}")); size != "60x20" {
		t.Fatalf("the terminal is %s, want 60x20", size)
	}
	screen := func() string { return tmux("capture-pane", "-p", "-t", "phone") }
	waitFor := func(what string, ok func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			s := screen()
			if ok(s) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s; the screen is:\n%s", what, s)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	contains := func(parts ...string) func(string) bool {
		return func(s string) bool {
			for _, p := range parts {
				if !strings.Contains(s, p) {
					return false
				}
			}
			return true
		}
	}
	waitFor("the dashboard", contains("Active 2", "DLQ 1"))
	tmux("send-keys", "-t", "phone", "5")
	waitFor("the Dead-lettered pane", contains("Dead-lettered 1", "SchemaValidationFailed"))
	tmux("send-keys", "-t", "phone", "Enter")
	s := waitFor("the detail view", contains("Why it is dead-lettered", "Reason", "SchemaValidationFailed"))
	t.Logf("the phone shows:\n%s", s)
	// The description is on screen whole, wrapped: join the lines.
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		parts = append(parts, strings.TrimSpace(l))
	}
	all := regexp.MustCompile(`\s+`).ReplaceAllString(strings.Join(parts, " "), " ")
	if !strings.Contains(all, phoneDescription) {
		t.Fatalf("the description is not on screen whole:\n%s", s)
	}
	for i, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if n := len([]rune(l)); n > 60 {
			t.Fatalf("line %d is %d wide", i, n)
		}
	}
	tmux("send-keys", "-t", "phone", "q")
	waitFor("the session to end", contains("ssh exited 0"))
}
