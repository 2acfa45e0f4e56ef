package devcert

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"

	"github.com/peeklock/peeklock/internal/userdirs"
)

// DefaultDir returns where the certificates live: DATA/tls with a data
// directory, else the user's configuration directory's peeklock/tls, as the
// environment getenv reads says (os.Getenv for the process's).
func DefaultDir(dataDir string, getenv userdirs.Getenv) (string, error) {
	if dataDir != "" {
		return filepath.Join(dataDir, "tls"), nil
	}
	dir, err := userdirs.Config(getenv)
	if err != nil {
		return "", fmt.Errorf("devcert: no directory for the certificates (give --data, or set HOME or XDG_CONFIG_HOME): %w", err)
	}
	return filepath.Join(dir, "peeklock", "tls"), nil
}

// writeKey writes a private key as PKCS #8 PEM, mode 0600.
func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("devcert: %w", err)
	}
	return writePEM(path, "PRIVATE KEY", der, 0o600)
}

// writePEM writes one PEM block to path through a temporary file in the
// same directory, created with mode perm and renamed over path.
func writePEM(path, typ string, der []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("devcert: %w", err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	// CreateTemp makes the file 0600; widen it for certificates only.
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("devcert: %w", err)
	}
	if err := pem.Encode(f, &pem.Block{Type: typ, Bytes: der}); err != nil {
		return fmt.Errorf("devcert: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("devcert: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("devcert: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("devcert: %w", err)
	}
	ok = true
	return nil
}
