package sshserver

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	gossh "golang.org/x/crypto/ssh"

	"github.com/peeklock/peeklock/broker"
)

// hostKeyComment is the comment stored in a generated host key.
const hostKeyComment = "peeklock host key"

// LoadOrCreateHostKey returns the host key kept at path. When the file does
// not exist it generates an ed25519 key, writes it in the OpenSSH private
// key format with mode 0600 (creating the directory, mode 0700, if needed)
// and reports created. An empty path gives a new key that is not kept.
func LoadOrCreateHostKey(path string) (signer gossh.Signer, created bool, err error) {
	if path == "" {
		s, _, err := newHostKey()
		return s, true, err
	}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		s, err := gossh.ParsePrivateKey(data)
		if err != nil {
			return nil, false, &broker.Error{Code: broker.CodeInvalid, Message: "ssh: host key " + path + " is not an unencrypted OpenSSH private key: " + err.Error(), Err: err}
		}
		return s, false, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, false, &broker.Error{Code: broker.CodeInvalid, Message: "ssh: cannot read the host key: " + err.Error(), Err: err}
	}
	s, block, err := newHostKey()
	if err != nil {
		return nil, false, err
	}
	if err := writeKeyFile(path, pem.EncodeToMemory(block)); err != nil {
		return nil, false, err
	}
	return s, true, nil
}

// newHostKey generates an ed25519 key.
func newHostKey() (gossh.Signer, *pem.Block, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, &broker.Error{Code: broker.CodeUnknown, Message: "ssh: cannot generate a host key: " + err.Error(), Err: err}
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		return nil, nil, &broker.Error{Code: broker.CodeUnknown, Message: "ssh: cannot use the generated host key: " + err.Error(), Err: err}
	}
	block, err := gossh.MarshalPrivateKey(priv, hostKeyComment)
	if err != nil {
		return nil, nil, &broker.Error{Code: broker.CodeUnknown, Message: "ssh: cannot encode the generated host key: " + err.Error(), Err: err}
	}
	return s, block, nil
}

// writeKeyFile writes data to path with mode 0600 so that the file appears
// whole or not at all: it is written to a temporary file in the same
// directory and then renamed.
func writeKeyFile(path string, data []byte) error {
	fail := func(err error) error {
		return &broker.Error{Code: broker.CodeUnknown, Message: "ssh: cannot write the host key " + path + ": " + err.Error(), Err: err}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(err)
	}
	f, err := os.CreateTemp(dir, ".ssh_host_key-*")
	if err != nil {
		return fail(err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing to remove
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	return nil
}
