package cli

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTmuxServeDataTrusted runs, in a real terminal, `peeklock serve
// --data DIR` (its CA in DIR/tls) and then `peeklock list` with the
// connection string serve printed, both with a home of their own: list
// trusts the CA that serve recorded for its port and exits 0. With another
// home (no record) the same list is a trust problem, one line with the fix
// and exit 2, not "connection lost".
func TestTmuxServeDataTrusted(t *testing.T) {
	bin := buildBinary(t)
	home := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=", "XDG_STATE_HOME="}
	p := launchServe(t, env, "--data", data, "--amqp", "127.0.0.1:0", "--admin", "127.0.0.1:0")
	if ca := p.wait(reTrustCA)[1]; ca != filepath.Join(data, "tls", "ca.pem") {
		t.Fatalf("the CA is %s, want it in the data directory", ca)
	}
	conn := p.wait(`connection_string="([^"]+)"`)[1]

	tm := newTmux(t, fmt.Sprintf("env HOME=%s XDG_CONFIG_HOME= XDG_STATE_HOME= %s list --connection '%s'", home, bin, conn))
	screen := tm.waitFor("list to end", has("peeklock exited"))
	if !strings.Contains(screen, "peeklock exited 0") || !strings.Contains(screen, "ENTITY") {
		t.Fatalf("list with serve's connection string:\n%s", screen)
	}

	r := runCLI(t, "", nil, "list", "--connection", conn)
	if r.status != 2 || !strings.Contains(r.stderr, "TLS certificate is not trusted") || !strings.Contains(r.stderr, "SSL_CERT_FILE=") ||
		strings.Contains(r.stderr, "connection lost") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("list without the record: status %d, %q; want 2 and the trust problem in one line", r.status, r.stderr)
	}
	p.stop()
	r = runCLI(t, "", []string{"HOME=" + home, "XDG_STATE_HOME="}, "list", "--connection", conn)
	if r.status != 1 || !regexp.MustCompile(`cannot reach the endpoint`).MatchString(r.stderr) || strings.Contains(r.stderr, "connection lost") {
		t.Fatalf("list after serve stopped: status %d, %q; want 1 and \"cannot reach\"", r.status, r.stderr)
	}
}

// TestServeWritesNothingBeforeItBinds: a serve whose port is taken fails
// before it writes anything: no data directory, no local CA in the home,
// no record of its CA.
func TestServeWritesNothingBeforeItBinds(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	home := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")
	r := runCLI(t, "", []string{"HOME=" + home, "XDG_CONFIG_HOME=", "XDG_STATE_HOME="}, "serve", "--data", data, "--amqp", busy.Addr().String(), "--admin", "")
	if r.status != 1 || !strings.Contains(r.stderr, "address already in use") {
		t.Fatalf("serve on a taken port: %d %q", r.status, r.stderr)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("the data directory was made: %v", err)
	}
	var made []string
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != home {
			made = append(made, p)
		}
		return nil
	})
	if len(made) > 0 {
		t.Errorf("serve wrote into the home: %v", made)
	}
}

// TestTrustHintNamesEveryRuntime: the line serve logs about its local CA,
// and the README's "Connect any SDK" table, say how Go, Node.js, Python,
// Java and .NET trust it, and where SDKs without a port in the endpoint
// dial.
func TestTrustHintNamesEveryRuntime(t *testing.T) {
	p := launchServe(t, nil, "--amqp", "127.0.0.1:0", "--admin", "")
	line := p.wait(`msg="(trust the local CA [^"]*)".*ports="([^"]*)"`)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(readme), "### Connect any SDK")
	for _, want := range []string{"SSL_CERT_FILE=", "NODE_EXTRA_CA_CERTS=", "REQUESTS_CA_BUNDLE=", "connection_verify=",
		"keytool", "javax.net.ssl.trustStore", "system store", ".NET", "Python", "Java"} {
		if !strings.Contains(line[1], want) {
			t.Errorf("the trust hint lacks %q: %s", want, line[1])
		}
		if !strings.Contains(table, want) {
			t.Errorf("the README's Connect any SDK table lacks %q", want)
		}
	}
	for _, want := range []string{"--tls-addr 127.0.0.1:5671", "--admin 127.0.0.1:443", "UseDevelopmentEmulator=true"} {
		if !strings.Contains(line[2], want) || !strings.Contains(table, want) {
			t.Errorf("the ports hint or the README lacks %q: %s", want, line[2])
		}
	}
}
