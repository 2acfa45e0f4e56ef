package cli

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	sbadmin "github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
	"github.com/coder/websocket"
	"github.com/peeklock/peeklock/internal/brokertest"
)

// caPool reads a CA certificate file into a pool.
func caPool(t *testing.T, path string) *x509.CertPool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatalf("%s holds no certificate", path)
	}
	return pool
}

const (
	reAMQPReady = `msg="AMQP 1.0 listener ready" addr=(\S+)`
	reTLSReady  = `msg="TLS listener ready" addr=(\S+)`
	reTrustCA   = `msg="trust the local CA [^"]*SSL_CERT_FILE=[^"]*NODE_EXTRA_CA_CERTS=[^"]*system store[^"]*" ca=(\S+) created=(\w+)`
)

// TestServeTLSEndToEnd runs `peeklock serve` (in process): on first start it makes a
// local CA in DATA/tls and says in one line how to trust it; the official
// SDK then uses TLS on the AMQP port and on --tls-addr, its admin client
// HTTPS on the AMQP port (no URL rewritten), and WebSockets; a second start
// reuses the CA.
func TestServeTLSEndToEnd(t *testing.T) {
	data := t.TempDir()
	config := writeConfig(t, `[{"Name":"q","Properties":{}}]`)
	args := []string{"--amqp", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--tls-addr", "127.0.0.1:0", "--data", data, "--config", config}
	p := launchServe(t, nil, args...)
	trust := p.wait(reTrustCA)
	if trust[1] != filepath.Join(data, "tls", "ca.pem") || trust[2] != "true" {
		t.Fatalf("trust line names %s (created=%s), want %s created=true", trust[1], trust[2], filepath.Join(data, "tls", "ca.pem"))
	}
	caPEM, _ := os.ReadFile(trust[1])
	amqpAddr := p.wait(reAMQPReady)[1]
	tlsAddr := p.wait(reTLSReady)[1]
	roots := caPool(t, trust[1])
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, amqpPort, _ := net.SplitHostPort(amqpAddr)
	_, tlsPort, _ := net.SplitHostPort(tlsAddr)
	const key = ";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE"

	// AMQP over TLS on both ports. ServerName is set because the Go SDK
	// takes it from the endpoint with its port ("localhost:40123"), which no
	// certificate matches; port 5671 needs nothing (TestServeTLSOn5671).
	for _, port := range []string{amqpPort, tlsPort} {
		c, err := azservicebus.NewClientFromConnectionString("Endpoint=sb://localhost:"+port+key,
			&azservicebus.ClientOptions{TLSConfig: &tls.Config{RootCAs: roots, ServerName: "localhost"}})
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(ctx, t, c, "q", "tls via "+port)
	}

	// The admin client over HTTPS on the AMQP port, unchanged.
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	ac, err := sbadmin.NewClientFromConnectionString("Endpoint=sb://localhost:"+amqpPort+key+";UseDevelopmentEmulator=true",
		&sbadmin.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: hc, Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ac.CreateQueue(ctx, "made-over-https", nil); err != nil {
		t.Fatalf("CreateQueue over HTTPS on the AMQP port: %v", err)
	}

	// AMQP over WebSockets on the AMQP port.
	ws, err := azservicebus.NewClientFromConnectionString("Endpoint=sb://localhost:"+amqpPort+key, &azservicebus.ClientOptions{
		NewWebSocketConn: func(ctx context.Context, args azservicebus.NewWebSocketConnArgs) (net.Conn, error) {
			c, _, err := websocket.Dial(ctx, args.Host, &websocket.DialOptions{Subprotocols: []string{"amqp"}, HTTPClient: hc})
			if err != nil {
				return nil, err
			}
			return websocket.NetConn(context.Background(), c, websocket.MessageBinary), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(ctx, t, ws, "made-over-https", "websockets")

	// HTTPS /health on the TLS port, plain /health on the admin port.
	res, err := hc.Get("https://localhost:" + tlsPort + "/health")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET https://localhost:%s/health: %v %v", tlsPort, res, err)
	}
	res.Body.Close()
	p.stop()

	// A second start reuses the CA.
	p2 := launchServe(t, nil, args...)
	again := p2.wait(reTrustCA)
	if again[2] != "false" {
		t.Errorf("second start: created=%s, want false", again[2])
	}
	if b, _ := os.ReadFile(trust[1]); !bytes.Equal(b, caPEM) {
		t.Error("the CA changed on the second start")
	}
}

// roundTrip sends one message to q and receives and completes it; it closes
// the client.
func roundTrip(ctx context.Context, t *testing.T, c *azservicebus.Client, q, body string) {
	t.Helper()
	defer c.Close(ctx)
	s, err := c.NewSender(q, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SendMessage(ctx, &azservicebus.Message{Body: []byte(body)}, nil); err != nil {
		t.Fatalf("send %q: %v", body, err)
	}
	r, err := c.NewReceiverForQueue(q, nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := r.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(msgs) != 1 || string(msgs[0].Body) != body {
		t.Fatalf("receive %q: %v, %v", body, msgs, err)
	}
	if err := r.CompleteMessage(ctx, msgs[0], nil); err != nil {
		t.Fatal(err)
	}
}

// TestServeTLSOn5671 runs serve with --tls-addr 127.0.0.1:5671 and the
// official SDK in a child process with nothing but SSL_CERT_FILE (a
// process of its own: the system roots, SSL_CERT_FILE's included, are read
// once per process): the connection string "Endpoint=sb://localhost;..."
// (no port, no emulator flag) is what an application written for Azure
// has. Skipped when 5671 is taken.
func TestServeTLSOn5671(t *testing.T) {
	if l, err := net.Listen("tcp", "127.0.0.1:5671"); err != nil {
		t.Skipf("127.0.0.1:5671 is in use: %v", err)
	} else {
		l.Close()
	}
	config := writeConfig(t, `[{"Name":"q","Properties":{}}]`)
	// The child keeps the test binary's config directory, not serve's: the
	// go command it runs (testhome) may leave telemetry files there after
	// it ended, which a TempDir of this test would fail to remove.
	childConfig := os.Getenv("XDG_CONFIG_HOME")
	cfgHome := t.TempDir()
	p := launchServe(t, []string{"XDG_CONFIG_HOME=" + cfgHome}, "--amqp", "", "--admin", "", "--tls-addr", "127.0.0.1:5671", "--config", config)
	ca := p.wait(reTrustCA)[1]
	if want := filepath.Join(cfgHome, "peeklock", "tls", "ca.pem"); ca != want {
		t.Errorf("without --data the CA is %s, want %s", ca, want)
	}
	p.wait(reTLSReady)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestServeTLSChild$", "-test.v")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+childConfig, "SSL_CERT_FILE="+ca,
		"PEEKLOCK_TLS_CHILD=Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestServeTLSChild") {
		t.Fatalf("the child SDK over TLS on 5671: %v\n%s", err, out)
	}
}

// TestServeTLSChild is TestServeTLSOn5671's child process.
func TestServeTLSChild(t *testing.T) {
	conn := os.Getenv("PEEKLOCK_TLS_CHILD")
	if conn == "" {
		t.Skip("run by TestServeTLSOn5671")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := azservicebus.NewClientFromConnectionString(conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(ctx, t, c, "q", "on 5671")
}

// TestServeOwnCertificate: --tls-cert and --tls-key are read before any
// port opens (a bad pair is one line and exit 2) and served as they are; no
// local CA is made then.
func TestServeOwnCertificate(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert", "cert.pem"}, "peeklock: --tls-cert and --tls-key go together (see peeklock --help)\n"},
		{[]string{"--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem"}, "--tls-cert /nonexistent/cert.pem --tls-key /nonexistent/key.pem: open /nonexistent/cert.pem: no such file or directory"},
	} {
		// The port is taken: the flags must fail before it is bound.
		busy, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		r := runCLI(t, "", nil, append([]string{"serve", "--amqp", busy.Addr().String()}, tc.args...)...)
		busy.Close()
		out := r.stdout + r.stderr
		if r.status != 2 || !strings.Contains(out, tc.want) || strings.Count(out, "\n") != 1 {
			t.Errorf("serve %v: status %d, %q; want exit 2 and %q", tc.args, r.status, out, tc.want)
		}
	}

	// A certificate of one's own (from a CA made by a first serve in
	// another directory).
	other := t.TempDir()
	p := launchServe(t, []string{"XDG_CONFIG_HOME=" + other}, "--amqp", "127.0.0.1:0", "--admin", "")
	p.wait(reAMQPReady)
	p.stop()
	own := filepath.Join(other, "peeklock", "tls")
	cfgHome := t.TempDir()
	p = launchServe(t, []string{"XDG_CONFIG_HOME=" + cfgHome}, "--amqp", "127.0.0.1:0", "--admin", "",
		"--tls-cert", filepath.Join(own, "cert.pem"), "--tls-key", filepath.Join(own, "key.pem"))
	addr := p.wait(reAMQPReady)[1]
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: caPool(t, filepath.Join(own, "ca.pem")), ServerName: "localhost"})
	if err != nil {
		t.Fatalf("TLS with the certificate given: %v", err)
	}
	served := c.ConnectionState().PeerCertificates[0].Raw
	c.Close()
	ownPEM, _ := os.ReadFile(filepath.Join(own, "cert.pem"))
	if !bytes.Contains(ownPEM, []byte(strings.TrimSpace(string(pemBody(served))))) {
		t.Error("serve does not serve the certificate given")
	}
	if _, err := os.Stat(filepath.Join(cfgHome, "peeklock", "tls")); err == nil {
		t.Error("a local CA was made although --tls-cert was given")
	}
}

// pemBody returns the base64 body of a DER certificate as PEM writes it.
func pemBody(der []byte) []byte {
	var b bytes.Buffer
	_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	return []byte(strings.Join(lines[1:len(lines)-1], "\n"))
}

// TestTmuxConnectOverWebSockets runs `peeklock connect --websockets` in a
// real terminal against `peeklock serve`, through an HTTPS_PROXY: the
// endpoint "localhost." resolves nowhere, so only the proxy's tunnel
// reaches serve, and plain AMQP could not. connect trusts the local CA that
// serve made in the shared config directory without SSL_CERT_FILE.
func TestTmuxConnectOverWebSockets(t *testing.T) {
	bin := buildBinary(t)
	cfgHome := t.TempDir()
	config := writeConfig(t, `[{"Name":"orders","Properties":{"LockDuration":"PT1M"}}]`)
	p := launchServe(t, []string{"XDG_CONFIG_HOME=" + cfgHome}, "--amqp", "127.0.0.1:0", "--admin", "", "--config", config)
	amqpAddr := p.wait(reAMQPReady)[1]
	_, port, _ := net.SplitHostPort(amqpAddr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, sender := sdkSender(t, "Endpoint=sb://"+amqpAddr+";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true", "orders")
	if err := sender.SendMessage(ctx, &azservicebus.Message{MessageID: ptr("ws-1"), Body: []byte(`{"over":"websockets"}`)}, nil); err != nil {
		t.Fatal(err)
	}
	px := brokertest.NewConnectProxy(t, amqpAddr)
	conn := "Endpoint=sb://localhost.:" + port + ";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true"
	tm := newTmux(t, fmt.Sprintf("env -u SSL_CERT_FILE XDG_CONFIG_HOME=%s HTTPS_PROXY=http://%s NO_PROXY= %s connect '%s' --websockets --entity orders",
		cfgHome, px.Addr(), bin, conn))
	tm.waitFor("the queue over WebSockets", has("orders", "Active 1", "ws-1", "connected"))
	tm.send("q")
	tm.waitFor("the program to exit", has("peeklock exited 0"))
	seen := px.Seen()
	if len(seen) == 0 || seen[0] != "localhost.:"+port {
		t.Fatalf("the proxy tunnelled %v, want localhost.:%s", seen, port)
	}
}

// TestServeEntraID runs `peeklock serve --entra-id` with roles in the
// config file: it warns in one line that signatures are not checked, an SDK
// client with a token credential (a JWT, or an opaque token as fake
// credentials hand out) works with the default role, and an object id the
// config makes a Receiver cannot send. Without --entra-id the same token is
// refused.
func TestServeEntraID(t *testing.T) {
	cfgHome := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfgHome, "peeklock"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgHome, "peeklock", "config.toml"),
		[]byte("[entra_id.roles]\n\"receiver-oid\" = \"Receiver\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := writeConfig(t, `[{"Name":"q","Properties":{}}]`)
	args := []string{"--amqp", "127.0.0.1:0", "--admin", "", "--config", config}
	p := launchServe(t, []string{"XDG_CONFIG_HOME=" + cfgHome}, append(args, "--entra-id")...)
	p.wait(`level=WARN msg="--entra-id: Entra ID tokens are accepted WITHOUT checking their signature[^"]*" roles=1 default_rights=Manage,Send,Listen opaque_tokens=true`)
	trust := p.wait(reTrustCA)
	_, port, _ := net.SplitHostPort(p.wait(reAMQPReady)[1])
	tlsCfg := &tls.Config{RootCAs: caPool(t, trust[1]), ServerName: "localhost"}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := func(token string) *azservicebus.Client {
		c, err := azservicebus.NewClient("localhost:"+port, staticCred(token), &azservicebus.ClientOptions{TLSConfig: tlsCfg,
			RetryOptions: azservicebus.RetryOptions{MaxRetries: -1}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	roundTrip(ctx, t, client(jwtFor("owner-oid")), "q", "as a JWT owner")
	roundTrip(ctx, t, client("an-opaque-development-token"), "q", "with an opaque token")
	sendAs := func(c *azservicebus.Client) error {
		defer c.Close(ctx)
		s, err := c.NewSender("q", nil)
		if err == nil {
			err = s.SendMessage(ctx, &azservicebus.Message{Body: []byte("x")}, nil)
		}
		return err
	}
	if err := sendAs(client(jwtFor("receiver-oid"))); err == nil || !strings.Contains(err.Error(), "'Send' claim(s) are required") {
		t.Fatalf("send as a Receiver: %v, want the Send claim refused", err)
	}
	p.stop()

	p = launchServe(t, []string{"XDG_CONFIG_HOME=" + cfgHome}, args...)
	_, port, _ = net.SplitHostPort(p.wait(reAMQPReady)[1])
	if err := sendAs(client(jwtFor("owner-oid"))); err == nil || !strings.Contains(err.Error(), "unauthorized") {
		t.Fatalf("send with a JWT without --entra-id: %v, want unauthorized", err)
	}
}

// jwtFor is an Entra ID-shaped token for Service Bus with object id oid
// (its signature is junk: --entra-id does not check it).
func jwtFor(oid string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." +
		enc([]byte(fmt.Sprintf(`{"aud":"https://servicebus.azure.net","oid":%q,"exp":%d}`, oid, time.Now().Add(time.Hour).Unix()))) + ".c2ln"
}

// staticCred hands out one token, as a token credential does.
type staticCred string

func (c staticCred) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: string(c), ExpiresOn: time.Now().Add(time.Hour)}, nil
}
