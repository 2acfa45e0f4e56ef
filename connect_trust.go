package main

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"

	"github.com/peeklock/peeklock/broker/devcert"
	"github.com/peeklock/peeklock/broker/remote"
)

// connectConfig is the remote client's configuration for connect. Its TLS
// trusts the system's roots and, when `peeklock serve` has made one in the
// user's config directory, the local CA: connect then reaches a local serve
// over TLS, HTTPS and WebSockets without SSL_CERT_FILE.
func connectConfig(conn remote.ConnectionString, entities []string, adminURL string) remote.Config {
	cfg := remote.Config{Conn: conn, Entities: entities, AdminURL: adminURL}
	roots := localTrust()
	if roots == nil {
		return cfg
	}
	cfg.TLSConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg.TLSConfig.Clone()
	cfg.HTTPClient = &http.Client{Transport: tr, Timeout: remote.DefaultTimeout}
	return cfg
}

// localTrust returns the system's roots with the local CA added, or nil
// when there is no local CA (or no system pool to add it to).
func localTrust() *x509.CertPool {
	dir, err := devcert.DefaultDir("")
	if err != nil {
		return nil
	}
	pem, err := os.ReadFile(filepath.Join(dir, devcert.CAFile))
	if err != nil {
		return nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		return nil
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil
	}
	return pool
}
