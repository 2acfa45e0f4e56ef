package devcert

import (
	"bytes"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// clock is a settable time source.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func open(t *testing.T, dir string, c *clock) *Authority {
	t.Helper()
	a, err := Open(Options{Dir: dir, Now: c.now})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return a
}

// verify checks the leaf against the authority for every default host at
// the clock's time.
func verify(t *testing.T, a *Authority, at time.Time) *x509.Certificate {
	t.Helper()
	cert, err := a.Leaf()
	if err != nil {
		t.Fatalf("Leaf: %v", err)
	}
	roots := x509.NewCertPool()
	pemBytes, err := os.ReadFile(a.CAPath())
	if err != nil {
		t.Fatal(err)
	}
	if !roots.AppendCertsFromPEM(pemBytes) {
		t.Fatal("ca.pem holds no certificate")
	}
	for _, h := range DefaultHosts {
		if _, err := cert.Leaf.Verify(x509.VerifyOptions{DNSName: h, Roots: roots, CurrentTime: at}); err != nil {
			t.Errorf("leaf for %s: %v", h, err)
		}
	}
	return cert.Leaf
}

func TestFirstStartMakesAuthorityAndLeaf(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	c := &clock{time.Now()}
	a := open(t, dir, c)
	if !a.Created() {
		t.Error("Created = false on first start")
	}
	verify(t, a, c.t)
	for name, mode := range map[string]os.FileMode{CAFile: 0o644, CAKeyFile: 0o600, CertFile: 0o644, KeyFile: 0o600} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v", name, fi.Mode().Perm(), mode)
		}
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 4 {
		t.Errorf("%d files in %s, want 4 (no temporary files left)", len(entries), dir)
	}
}

func TestSecondStartReuses(t *testing.T) {
	dir := t.TempDir()
	c := &clock{time.Now()}
	first := verify(t, open(t, dir, c), c.t)
	caBefore, _ := os.ReadFile(filepath.Join(dir, CAFile))
	c.t = c.t.Add(24 * time.Hour)
	a := open(t, dir, c)
	if a.Created() {
		t.Error("Created = true on a second start")
	}
	second := verify(t, a, c.t)
	if first.SerialNumber.Cmp(second.SerialNumber) != 0 {
		t.Error("a fresh leaf was issued although the old one is good")
	}
	caAfter, _ := os.ReadFile(filepath.Join(dir, CAFile))
	if !bytes.Equal(caBefore, caAfter) {
		t.Error("the CA changed")
	}
}

func TestLeafRenewedFromSameAuthority(t *testing.T) {
	dir := t.TempDir()
	c := &clock{time.Now()}
	a := open(t, dir, c)
	first := verify(t, a, c.t)

	// While serving: a leaf inside its renewal window is replaced.
	c.t = first.NotAfter.Add(-DefaultRenewBefore - time.Hour)
	if got, _ := a.Leaf(); got.Leaf.SerialNumber.Cmp(first.SerialNumber) != 0 {
		t.Fatal("renewed too early")
	}
	c.t = first.NotAfter.Add(-DefaultRenewBefore + time.Hour)
	second := verify(t, a, c.t)
	if second.SerialNumber.Cmp(first.SerialNumber) == 0 {
		t.Fatal("the leaf was not renewed inside its renewal window")
	}
	if !second.NotAfter.After(first.NotAfter) {
		t.Errorf("renewed leaf expires %v, not after %v", second.NotAfter, first.NotAfter)
	}
	onDisk, err := os.ReadFile(filepath.Join(dir, CertFile))
	if err != nil || !bytes.Contains(onDisk, []byte("CERTIFICATE")) {
		t.Fatalf("cert.pem: %v", err)
	}

	// At start: an expired leaf on disk is replaced, the CA kept.
	c.t = second.NotAfter.Add(time.Hour)
	b := open(t, dir, c)
	if b.Created() {
		t.Error("the CA was remade")
	}
	third := verify(t, b, c.t)
	if third.SerialNumber.Cmp(second.SerialNumber) == 0 {
		t.Error("an expired leaf was reused")
	}
}

func TestHalfAuthorityIsAnError(t *testing.T) {
	dir := t.TempDir()
	c := &clock{time.Now()}
	open(t, dir, c)
	caBefore, _ := os.ReadFile(filepath.Join(dir, CAFile))
	if err := os.Remove(filepath.Join(dir, CAKeyFile)); err != nil {
		t.Fatal(err)
	}
	_, err := Open(Options{Dir: dir, Now: c.now})
	if !errors.Is(err, broker.ErrInvalid) {
		t.Fatalf("Open with ca-key.pem missing: %v, want an invalid error", err)
	}
	caAfter, _ := os.ReadFile(filepath.Join(dir, CAFile))
	if !bytes.Equal(caBefore, caAfter) {
		t.Error("a half-present CA was overwritten")
	}
	// Garbage in place of the CA is refused too.
	if err := os.WriteFile(filepath.Join(dir, CAKeyFile), []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Options{Dir: dir, Now: c.now}); !errors.Is(err, broker.ErrInvalid) {
		t.Fatalf("Open with a garbage key: %v, want an invalid error", err)
	}
}

func TestLeafOfAnotherAuthorityIsReplaced(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	c := &clock{time.Now()}
	open(t, dir, c)
	open(t, other, c)
	for _, f := range []string{CertFile, KeyFile} {
		b, _ := os.ReadFile(filepath.Join(other, f))
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	verify(t, open(t, dir, c), c.t) // fails unless the leaf was reissued
}

func TestDefaultDir(t *testing.T) {
	getenv := func(name string) string { return map[string]string{"XDG_CONFIG_HOME": "/cfg"}[name] }
	if d, _ := DefaultDir("/data", getenv); d != filepath.Join("/data", "tls") {
		t.Errorf("DefaultDir(/data) = %q", d)
	}
	if runtime.GOOS != "linux" {
		return // the XDG rules are those of Linux and the BSDs
	}
	if d, _ := DefaultDir("", getenv); d != filepath.Join("/cfg", "peeklock", "tls") {
		t.Errorf("DefaultDir() = %q", d)
	}
}
