package cli

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"

	"github.com/peeklock/peeklock/broker/devcert"
	"github.com/peeklock/peeklock/broker/remote"
)

// connectConfig is the remote client's configuration for connect and the
// runbook commands. Its TLS trusts the system's roots and the local CAs of
// `peeklock serve`: the one in the user's config directory, and the one a
// serve on this machine recorded for the endpoint's port (servedca.go), so
// that serve's connection string works over TLS, HTTPS and WebSockets
// without SSL_CERT_FILE, with or without serve --data.
func connectConfig(env environ, conn remote.ConnectionString, entities []string, adminURL string) remote.Config {
	cfg := remote.Config{Conn: conn, Entities: entities, AdminURL: adminURL}
	roots := localTrust(env, servedCAs(env, conn, adminURL))
	if roots == nil {
		return cfg
	}
	cfg.TLSConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg.TLSConfig.Clone()
	cfg.HTTPClient = &http.Client{Transport: tr, Timeout: remote.DefaultTimeout}
	return cfg
}

// localTrust returns the system's roots with the local CAs added (the
// config directory's and the files given), or nil when there is none (or
// no system pool to add them to).
func localTrust(env environ, more []string) *x509.CertPool {
	files := more
	if dir, err := devcert.DefaultDir("", env.get); err == nil {
		files = append(files, filepath.Join(dir, devcert.CAFile))
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		return nil
	}
	added := false
	for _, f := range files {
		pem, err := os.ReadFile(f)
		if err == nil && pool.AppendCertsFromPEM(pem) {
			added = true
		}
	}
	if !added {
		return nil
	}
	return pool
}
