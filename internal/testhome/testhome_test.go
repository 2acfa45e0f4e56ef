package testhome

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain is the package's own guard.
func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestIsolated: HOME and the XDG directories are not the real ones while
// the tests run.
func TestIsolated(t *testing.T) {
	home, _ := os.UserHomeDir()
	cfg, _ := os.UserConfigDir()
	if filepath.Dir(home) != os.TempDir() || !strings.HasPrefix(cfg, home) {
		t.Fatalf("HOME %s, config %s: not a temporary directory", home, cfg)
	}
}

// TestDiffSeesAWrite: a file made, changed or removed under a watched
// directory is reported; a golden file is not.
func TestDiffSeesAWrite(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(old, []byte("a"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := snapshot([]string{dir})
	os.MkdirAll(filepath.Join(dir, "tls"), 0o700)
	os.WriteFile(filepath.Join(dir, "tls", "ca.pem"), []byte("x"), 0o600)
	os.MkdirAll(filepath.Join(dir, "testdata"), 0o700)
	os.WriteFile(filepath.Join(dir, "testdata", "x.golden"), []byte("x"), 0o600)
	os.Remove(old)
	got := diff(before, snapshot([]string{dir}))
	if len(got) != 2 {
		t.Fatalf("diff = %q, want the CA made and the config removed", got)
	}
}
