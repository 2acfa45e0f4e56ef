package devcert

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// The files of an authority's directory.
const (
	CAFile    = "ca.pem"
	CAKeyFile = "ca-key.pem"
	CertFile  = "cert.pem"
	KeyFile   = "key.pem"
)

// Defaults of Options.
const (
	DefaultCALifetime   = 10 * 365 * 24 * time.Hour
	DefaultLeafLifetime = 90 * 24 * time.Hour
	DefaultRenewBefore  = 30 * 24 * time.Hour
)

// DefaultHosts are the names the leaf certificate is valid for.
var DefaultHosts = []string{"localhost", "127.0.0.1", "::1"}

// Options configure Open. Only Dir is required.
type Options struct {
	// Dir holds the files; it is created (mode 0700) when missing.
	Dir string
	// Hosts are the DNS names and IP addresses of the leaf; nil means
	// DefaultHosts.
	Hosts []string
	// Now is the time source; nil means time.Now.
	Now func() time.Time
	// CALifetime, LeafLifetime and RenewBefore (how long before its expiry
	// a leaf is replaced) default to the constants above.
	CALifetime, LeafLifetime, RenewBefore time.Duration
}

// Authority is a local certificate authority and its current leaf. Its
// methods are safe for concurrent use.
type Authority struct {
	opts   Options
	ca     *x509.Certificate
	caKey  crypto.Signer
	made   bool // the authority was created by Open
	mu     sync.Mutex
	leaf   *tls.Certificate
	expiry time.Time
}

// Open loads the authority and leaf of opts.Dir, making what is missing and
// renewing a leaf that is close to expiry, not signed by the authority, or
// not valid for every host.
func Open(opts Options) (*Authority, error) {
	if opts.Dir == "" {
		return nil, broker.Errorf(broker.CodeInvalid, "devcert: no directory for the certificates")
	}
	if opts.Hosts == nil {
		opts.Hosts = DefaultHosts
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.CALifetime <= 0 {
		opts.CALifetime = DefaultCALifetime
	}
	if opts.LeafLifetime <= 0 {
		opts.LeafLifetime = DefaultLeafLifetime
	}
	if opts.RenewBefore <= 0 || opts.RenewBefore >= opts.LeafLifetime {
		opts.RenewBefore = min(DefaultRenewBefore, opts.LeafLifetime/3)
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("devcert: %w", err)
	}
	a := &Authority{opts: opts}
	if err := a.loadOrMakeCA(); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.loadLeaf(); err != nil {
		if err := a.issueLeaf(); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// CAPath returns the path of the authority's certificate: the file that
// clients must trust.
func (a *Authority) CAPath() string { return a.path(CAFile) }

// Created reports whether Open made a new authority (first start).
func (a *Authority) Created() bool { return a.made }

// CA returns the authority's certificate.
func (a *Authority) CA() *x509.Certificate { return a.ca }

// Leaf returns the current leaf certificate, renewing it first when it is
// due.
func (a *Authority) Leaf() (*tls.Certificate, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.opts.Now().Add(a.opts.RenewBefore).Before(a.expiry) {
		return a.leaf, nil
	}
	if err := a.issueLeaf(); err != nil {
		// Keep serving the old leaf while it is valid.
		if a.leaf != nil && a.opts.Now().Before(a.expiry) {
			return a.leaf, nil
		}
		return nil, err
	}
	return a.leaf, nil
}

// GetCertificate is tls.Config's hook: the current leaf.
func (a *Authority) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return a.Leaf()
}

// TrustHint is the one line that tells a user how to trust the authority.
func (a *Authority) TrustHint() string {
	p := a.CAPath()
	return "trust the local CA " + p + ": SSL_CERT_FILE=" + p + " (Go, OpenSSL), NODE_EXTRA_CA_CERTS=" + p +
		" (Node.js), or add it to the system store (e.g. update-ca-certificates)"
}

func (a *Authority) path(name string) string { return filepath.Join(a.opts.Dir, name) }

// loadOrMakeCA reads ca.pem and ca-key.pem, or makes both when both are
// missing (or the authority has expired).
func (a *Authority) loadOrMakeCA() error {
	certPEM, certErr := os.ReadFile(a.path(CAFile))
	keyPEM, keyErr := os.ReadFile(a.path(CAKeyFile))
	switch {
	case errors.Is(certErr, fs.ErrNotExist) && errors.Is(keyErr, fs.ErrNotExist):
		return a.makeCA()
	case certErr != nil:
		return a.halfPresent(CAFile, certErr)
	case keyErr != nil:
		return a.halfPresent(CAKeyFile, keyErr)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return broker.Errorf(broker.CodeInvalid, "devcert: the local CA in %s is unusable (%v); remove %s and %s to make a new one",
			a.opts.Dir, err, CAFile, CAKeyFile)
	}
	ca, err := x509.ParseCertificate(pair.Certificate[0])
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if err != nil || !ok || !ca.IsCA {
		return broker.Errorf(broker.CodeInvalid, "devcert: %s is not a certificate authority; remove %s and %s to make a new one",
			a.path(CAFile), CAFile, CAKeyFile)
	}
	if !a.opts.Now().Add(a.opts.LeafLifetime).Before(ca.NotAfter) {
		return a.makeCA() // expired or about to: a leaf could not outlive it
	}
	a.ca, a.caKey = ca, signer
	return nil
}

func (a *Authority) halfPresent(name string, err error) error {
	return &broker.Error{Code: broker.CodeInvalid, Err: err, Message: fmt.Sprintf(
		"devcert: cannot read %s (%v); the local CA needs both %s and %s: remove both to make a new one", a.path(name), err, CAFile, CAKeyFile)}
}

func (a *Authority) makeCA() error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("devcert: %w", err)
	}
	now := a.opts.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "peeklock local development CA", Organization: []string{"peeklock"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(a.opts.CALifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("devcert: %w", err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return fmt.Errorf("devcert: %w", err)
	}
	if err := writeKey(a.path(CAKeyFile), key); err != nil {
		return err
	}
	if err := writePEM(a.path(CAFile), "CERTIFICATE", der, 0o644); err != nil {
		return err
	}
	a.ca, a.caKey, a.made = ca, key, true
	return nil
}

// loadLeaf reads cert.pem and key.pem and keeps them when they are still
// good (under a.mu).
func (a *Authority) loadLeaf() error {
	pair, err := tls.LoadX509KeyPair(a.path(CertFile), a.path(KeyFile))
	if err != nil {
		return err
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return err
	}
	if err := leaf.CheckSignatureFrom(a.ca); err != nil {
		return err
	}
	if !a.opts.Now().Add(a.opts.RenewBefore).Before(leaf.NotAfter) {
		return errors.New("due for renewal")
	}
	for _, h := range a.opts.Hosts {
		if err := leaf.VerifyHostname(h); err != nil {
			return err
		}
	}
	pair.Leaf = leaf
	a.leaf, a.expiry = &pair, leaf.NotAfter
	return nil
}

// issueLeaf makes a new leaf from the authority and writes it (under a.mu).
func (a *Authority) issueLeaf() error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("devcert: %w", err)
	}
	now := a.opts.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: a.opts.Hosts[0], Organization: []string{"peeklock"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(a.opts.LeafLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range a.opts.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.ca, &key.PublicKey, a.caKey)
	if err != nil {
		return fmt.Errorf("devcert: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return fmt.Errorf("devcert: %w", err)
	}
	if err := writeKey(a.path(KeyFile), key); err != nil {
		return err
	}
	if err := writePEM(a.path(CertFile), "CERTIFICATE", der, 0o644); err != nil {
		return err
	}
	a.leaf = &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
	a.expiry = leaf.NotAfter
	return nil
}

// serial returns a random 128-bit serial number.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n.Add(n, big.NewInt(1))
}
