package sshserver

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/peeklock/peeklock/broker"
)

// newSigner returns a new ed25519 client key.
func newSigner(t testing.TB) gossh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// authLine is the authorized_keys line of s with comment.
func authLine(s gossh.Signer, comment string) string {
	return strings.TrimSpace(string(gossh.MarshalAuthorizedKey(s.PublicKey()))) + " " + comment
}

func TestParseAuthorizedKeysRoles(t *testing.T) {
	alice, bob, carol := newSigner(t), newSigner(t), newSigner(t)
	bobFP := gossh.FingerprintSHA256(bob.PublicKey())
	data := strings.Join([]string{
		"# on-call keys",
		"",
		authLine(alice, "alice@laptop"),
		`no-port-forwarding,command="/bin/false" ` + authLine(bob, "bob@phone"),
		authLine(carol, "carol@desk"),
		`cert-authority ` + authLine(newSigner(t), "ca"),
	}, "\n")
	roles := map[string]Role{"alice@laptop": RoleOperator, bobFP: RoleOperator, "bob@phone": RoleReadOnly, "nobody": RoleOperator}
	keys, warnings, err := parseAuthorizedKeys("ak", []byte(data), roles)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, k := range keys {
		got[k.Comment] = fmt.Sprintf("%s line %d", k.Role, k.line)
	}
	want := map[string]string{"alice@laptop": "operator line 3", "bob@phone": "operator line 4", "carol@desk": "read-only line 5"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("roles %v, want %v (fingerprint beats comment; unnamed keys are read-only)", got, want)
	}
	wantWarn := []string{
		"ak line 6: cert-authority keys are not supported; skipped",
		`roles: "nobody" names no key of ak`,
	}
	if fmt.Sprint(warnings) != fmt.Sprint(wantWarn) {
		t.Fatalf("warnings %q, want %q", warnings, wantWarn)
	}
}

func TestParseAuthorizedKeysBadLine(t *testing.T) {
	data := authLine(newSigner(t), "ok") + "\nssh-ed25519 AAAAnotbase64!!\n"
	_, _, err := parseAuthorizedKeys("ak", []byte(data), nil)
	if !errors.Is(err, broker.ErrInvalid) || !strings.HasPrefix(err.Error(), "invalid request: ssh: ak line 2: not an authorized key: ") {
		t.Fatalf("err = %v", err)
	}
}

func TestKeyRingReloadsAndFailsClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "authorized_keys")
	alice, bob := newSigner(t), newSigner(t)
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		// Make the change visible even on coarse file times.
		later := time.Now().Add(time.Duration(len(s)) * time.Second)
		os.Chtimes(path, later, later)
	}
	write(authLine(alice, "alice") + "\n")
	ring, err := newKeyRing(path, map[string]Role{"bob": RoleOperator}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ring.lookup(bob.PublicKey()); ok {
		t.Fatal("bob is accepted before his key is added")
	}
	if id, ok := ring.lookup(alice.PublicKey()); !ok || id.Role != RoleReadOnly || id.Comment != "alice" {
		t.Fatalf("alice = %+v, %v; want read-only", id, ok)
	}
	write(authLine(alice, "alice") + "\n" + authLine(bob, "bob") + "\n")
	if id, ok := ring.lookup(bob.PublicKey()); !ok || id.Role != RoleOperator {
		t.Fatalf("bob after reload = %+v, %v; want operator", id, ok)
	}
	write("garbage line that is not a key\n" + authLine(alice, "alice") + "\n")
	if _, ok := ring.lookup(alice.PublicKey()); ok {
		t.Fatal("a broken file still lets alice in; want every key refused")
	}
	write(authLine(alice, "alice") + "\n")
	if _, ok := ring.lookup(alice.PublicKey()); !ok {
		t.Fatal("alice refused after the file was fixed")
	}
	os.Remove(path)
	if _, ok := ring.lookup(alice.PublicKey()); ok {
		t.Fatal("alice accepted after the file was removed")
	}
}
