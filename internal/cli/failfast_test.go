package cli

import (
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// filesUnder lists the files and directories under dir.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err == nil && p != dir {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// refusal runs the command line in a fresh home (XDG_CONFIG_HOME inside it) and
// checks that it refuses with exactly one line on stderr holding want, the
// exit status, that it wrote nothing into the home, opened no listener,
// and echoed no secret.
func refusal(t *testing.T, status int, want string, secrets []string, args ...string) {
	t.Helper()
	home := t.TempDir()
	r := runCLI(t, "", []string{"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "HOME=" + home}, args...)
	line := strings.TrimSuffix(r.stderr, "\n")
	if r.status != status || !strings.Contains(line, want) || strings.Contains(line, "\n") || !strings.HasPrefix(line, "peeklock: ") {
		t.Errorf("peeklock %s:\n status %d, stderr %q\n want status %d and one line with %q", strings.Join(args, " "), r.status, r.stderr, status, want)
	}
	if r.stdout != "" {
		t.Errorf("peeklock %s: wrote %q on stdout", strings.Join(args, " "), r.stdout)
	}
	for _, s := range secrets {
		if strings.Contains(r.stderr, s) {
			t.Errorf("peeklock %s: the secret %q is in %q", strings.Join(args, " "), s, r.stderr)
		}
	}
	if files := filesUnder(t, home); len(files) > 0 {
		t.Errorf("peeklock %s: wrote %v before refusing", strings.Join(args, " "), files)
	}
}

// writeFile writes text to a new file in its own temporary directory.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestFailFastWhatTheUserTyped: every mistake of the command line and of
// the files it names ends with one line and exit status 2 before any screen
// opens, any port is bound or anything is written.
func TestFailFastWhatTheUserTyped(t *testing.T) {
	badTOML := writeFile(t, "config.toml", "refresh = \"1s\"\ntheme = \"dark\n")
	conflict := writeFile(t, "config.toml", "# mine\n[keys]\ncomplete = [\"q\"]\n")
	badTheme := writeFile(t, "config.toml", "theme = \"neon\"\n")
	badJSON := writeFile(t, "Config.json", "{\n  \"UserConfig\": x}")
	badQueue := writeFile(t, "Config.json", `{"UserConfig":{"Namespaces":[{"Name":"n","Queues":[{"Name":"q","Properties":{"LockDurration":"PT1M"}}]}]}}`)
	keys := writeFile(t, "authorized_keys", "")
	missingKeys := filepath.Join(t.TempDir(), "authorized_keys")
	data := filepath.Join(t.TempDir(), "new-data")
	filled := t.TempDir()
	fillStore(t, filled, "orders", 1)
	const secret = "U1VQRVJTRUNSRVQ="
	for _, tc := range []struct {
		status int
		want   string
		args   []string
	}{
		{2, `connect: bad connection string: unknown key "Bogus"`, []string{"connect", "Endpoint=sb://x;SharedAccessKeyName=k;SharedAccessKey=" + secret + ";Bogus=1"}},
		{2, "connect: bad connection string", []string{"connect", "Endpoint=sb://x;SharedAccessKeyName=k"}},
		{2, `--theme: unknown theme "neon" (known: dark, high-contrast, light, no-color)`, []string{"--no-demo", "--theme", "neon"}},
		{2, `--theme: unknown theme "neon"`, []string{"connect", "Endpoint=sb://x;SharedAccessKeyName=k;SharedAccessKey=" + secret, "--theme", "neon"}},
		{2, "config " + badTOML + ":2:14: strings cannot contain newlines", []string{"--ui-config", badTOML}},
		{2, "config " + badTheme + `:1:1: unknown theme "neon"`, []string{"--ui-config", badTheme}},
		{2, "config " + conflict + `:3:1: keymap: action "complete": key "q" is also bound to "quit"`, []string{"--ui-config", conflict}},
		{2, badJSON + ": the configuration is not valid JSON at line 2, column 17", []string{"--config", badJSON}},
		{2, badQueue + ": UserConfig.Namespaces[0].Queues[0].Properties.LockDurration is not a known property here", []string{"serve", "--config", badQueue}},
		{2, "ssh: authorized keys: stat " + missingKeys, []string{"serve", "--amqp", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--ssh", "127.0.0.1:0", "--authorized-keys", missingKeys}},
		{2, "--ssh needs --authorized-keys FILE", []string{"serve", "--amqp", "127.0.0.1:0", "--ssh", "127.0.0.1:0"}},
		{2, "config " + conflict + ":3:1", []string{"serve", "--amqp", "127.0.0.1:0", "--ssh", "127.0.0.1:0", "--authorized-keys", keys, "--ui-config", conflict}},
		{2, `--admin "5300": want HOST:PORT`, []string{"serve", "--admin", "5300"}},
		{2, "config " + badTheme + `:1:1: unknown theme "neon"`, []string{"serve", "--amqp", "127.0.0.1:0", "--ui-config", badTheme}},
		{2, `unknown entity "nope"; the entities are "orders"`, []string{"--data", filled, "--no-demo", "--entity", "nope"}},
		{2, `unknown entity "ordrs"; did you mean "orders"?`, []string{"--data", filled, "--no-demo", "--entity", "ordrs"}},
		{2, `unknown entity "nope"; the endpoint has no entities`, []string{"--data", data, "--no-demo", "--entity", "nope"}},
		{2, `unknown entity "paymnts"; did you mean "payments"?`, []string{"--entity", "paymnts"}},
	} {
		refusal(t, tc.status, tc.want, []string{secret}, tc.args...)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("a refused dashboard left the data directory it created: %v", err)
	}
}

// TestFailFastAgainstServe: a wrong key, an unknown entity and an
// unreachable endpoint are found before the dashboard opens; the key and
// the wrong key are never echoed.
func TestFailFastAgainstServe(t *testing.T) {
	config := writeConfig(t, `[{"Name":"orders","Properties":{}},{"Name":"payments","Properties":{}}]`)
	conn, adminAddr, stop := startServe(t, "--config", config, "--key", "app=c2VjcmV0")
	defer stop()
	wrong := strings.Replace(conn, "SharedAccessKey=c2VjcmV0", "SharedAccessKey=V1JPTkdLRVk=", 1)
	secrets := []string{"c2VjcmV0", "V1JPTkdLRVk="}
	admin := "http://" + adminAddr
	for _, tc := range []struct {
		status int
		want   string
		args   []string
	}{
		{2, `the endpoint refused the credential: unauthorized: admin API /$Resources/Queues: 401`, []string{"connect", wrong, "--admin-url", admin}},
		{2, `the endpoint refused the credential: unauthorized: the endpoint refused the token`, []string{"connect", wrong, "--admin-url", admin, "--entity", "orders"}},
		{2, `unknown entity "ordrs"; did you mean "orders"?`, []string{"connect", conn, "--admin-url", admin, "--entity", "ordrs"}},
		{2, `unknown entity "ordrs": The messaging entity 'sb://127.0.0.1/ordrs' could not be found`, []string{"connect", conn, "--admin-url", "http://" + freeAddr(t), "--entity", "ordrs"}},
		{1, "connection refused", []string{"connect", strings.Replace(conn, strings.TrimPrefix(strings.Split(conn, ";")[0], "Endpoint=sb://"), freeAddr(t), 1)}},
	} {
		refusal(t, tc.status, tc.want, secrets, tc.args...)
	}
}
