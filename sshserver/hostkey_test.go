package sshserver

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	gossh "golang.org/x/crypto/ssh"

	"github.com/peeklock/peeklock/broker"
)

func TestHostKeyCreatedOnceAndReused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", HostKeyFile)
	s1, created, err := LoadOrCreateHostKey(path)
	if err != nil || !created {
		t.Fatalf("first start: created %v, %v; want a new key", created, err)
	}
	if got := s1.PublicKey().Type(); got != gossh.KeyAlgoED25519 {
		t.Fatalf("key type %q, want ed25519", got)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Fatalf("key file mode %v, want 0600", mode)
	}
	s2, created, err := LoadOrCreateHostKey(path)
	if err != nil || created {
		t.Fatalf("second start: created %v, %v; want the kept key", created, err)
	}
	if !bytes.Equal(s1.PublicKey().Marshal(), s2.PublicKey().Marshal()) {
		t.Fatal("the host key changed across restarts")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("the data directory holds %d files, want only the key (no temporary left)", len(entries))
	}
}

func TestHostKeyEphemeralAndBad(t *testing.T) {
	a, created, err := LoadOrCreateHostKey("")
	if err != nil || !created {
		t.Fatal(err)
	}
	b, _, _ := LoadOrCreateHostKey("")
	if bytes.Equal(a.PublicKey().Marshal(), b.PublicKey().Marshal()) {
		t.Fatal("two ephemeral keys are equal")
	}
	path := filepath.Join(t.TempDir(), HostKeyFile)
	os.WriteFile(path, []byte("not a key"), 0o600)
	_, _, err = LoadOrCreateHostKey(path)
	if !errors.Is(err, broker.ErrInvalid) {
		t.Fatalf("bad key file: %v, want ErrInvalid", err)
	}
}
