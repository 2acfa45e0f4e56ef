package amqpserver

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker/amqpserver/admin"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/internal/brokertest"
	"github.com/peeklock/peeklock/internal/serve"
)

// frontEnv is a testEnv whose listener is also behind a front on its own
// port, as `peeklock serve` runs it: plain AMQP, TLS (AMQP and HTTPS, the
// admin API), and AMQP over WebSockets, with a fresh local CA.
type frontEnv struct {
	*testEnv
	port   string // the front's port on 127.0.0.1
	caPath string
	roots  *x509.CertPool
}

func newFrontEnv(t *testing.T, eopts engine.Options, opts Options) *frontEnv {
	t.Helper()
	env := newEnv(t, eopts, opts)
	server, roots, caPath := brokertest.LocalCA(t)
	addr := brokertest.ServePort(t, serve.Options{
		AMQP:   env.srv.ServeConn,
		HTTP:   admin.NewHandler(env.eng, admin.Options{Keys: opts.Keys, KeyRights: opts.KeyRights, EntraID: opts.EntraID}),
		TLS:    server,
		Logger: env.srv.log,
	})
	_, port, _ := net.SplitHostPort(addr)
	return &frontEnv{testEnv: env, port: port, caPath: caPath, roots: roots}
}

// tlsConnString is a connection string for the front without
// UseDevelopmentEmulator: the SDKs then use TLS (amqps) to localhost:port.
func (e *frontEnv) tlsConnString() string {
	return fmt.Sprintf("Endpoint=sb://localhost:%s;SharedAccessKeyName=%s;SharedAccessKey=%s", e.port, DefaultKeyName, DefaultKey)
}

// emulatorConnString is the emulator form for the front's port: plain AMQP
// (and https for the admin clients, which ignore the flag).
func (e *frontEnv) emulatorConnString() string {
	return e.tlsConnString() + ";UseDevelopmentEmulator=true"
}

// tlsConfig trusts the local CA. ServerName is set because the Go SDK
// (go-amqp) takes the TLS server name from the endpoint's host *with its
// port* ("localhost:40123"), which no certificate can match; on port 5671
// (no port in the endpoint) SSL_CERT_FILE alone does it.
func (e *frontEnv) tlsConfig() *tls.Config {
	return &tls.Config{RootCAs: e.roots, ServerName: "localhost", MinVersion: tls.VersionTLS12}
}

// httpClient trusts the local CA; the URL's host names the server.
func (e *frontEnv) httpClient() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: e.roots}}}
}
