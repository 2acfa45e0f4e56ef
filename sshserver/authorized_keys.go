package sshserver

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/peeklock/peeklock/broker"
)

// identity is who holds an authorised key, as the audit log names them.
type identity struct {
	Fingerprint string // "SHA256:…"
	Comment     string
	Role        Role
}

// authorizedKey is one line of an authorized_keys file.
type authorizedKey struct {
	key  gossh.PublicKey
	line int
	identity
}

// parseAuthorizedKeys parses an OpenSSH authorized_keys file. Blank lines
// and comment lines are skipped, options are accepted and ignored, and
// cert-authority lines are skipped with a warning (certificates are not
// supported). Any other line that is not a key is an error naming the line.
func parseAuthorizedKeys(name string, data []byte, roles map[string]Role) (keys []authorizedKey, warnings []string, err error) {
	for i, line := range bytes.Split(data, []byte("\n")) {
		n := i + 1
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		pk, comment, options, _, err := gossh.ParseAuthorizedKey(line)
		if err != nil {
			return nil, nil, broker.Errorf(broker.CodeInvalid, "ssh: %s line %d: not an authorized key: %v", name, n, err)
		}
		if slices.ContainsFunc(options, func(o string) bool { return strings.EqualFold(o, "cert-authority") }) {
			warnings = append(warnings, fmt.Sprintf("%s line %d: cert-authority keys are not supported; skipped", name, n))
			continue
		}
		k := authorizedKey{key: pk, line: n, identity: identity{Fingerprint: gossh.FingerprintSHA256(pk), Comment: comment}}
		k.Role = roleOf(roles, k.Fingerprint, comment)
		keys = append(keys, k)
	}
	// A role entry that names no key is most likely a typo.
	for want := range roles {
		if !slices.ContainsFunc(keys, func(k authorizedKey) bool { return k.Fingerprint == want || k.Comment == want }) {
			warnings = append(warnings, fmt.Sprintf("roles: %q names no key of %s", want, name))
		}
	}
	slices.Sort(warnings)
	return keys, warnings, nil
}

// roleOf returns the role of a key: by fingerprint, else by comment, else
// read-only.
func roleOf(roles map[string]Role, fingerprint, comment string) Role {
	if r, ok := roles[fingerprint]; ok {
		return r
	}
	if comment != "" {
		if r, ok := roles[comment]; ok {
			return r
		}
	}
	return RoleReadOnly
}

// keyRing is the authorised keys, read again from the file when its size or
// modification time changes. When the file cannot be read or parsed any
// more, every key is refused until it is fixed: a key removed from a broken
// file must not keep working.
type keyRing struct {
	path  string
	roles map[string]Role
	log   *slog.Logger

	mu      sync.Mutex
	modTime time.Time
	size    int64
	keys    map[string]identity // by the key's wire form
	broken  error
}

// newKeyRing reads the file once; an error here stops the server from
// starting.
func newKeyRing(path string, roles map[string]Role, log *slog.Logger) (*keyRing, error) {
	r := &keyRing{path: path, roles: roles, log: log}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, broker.Errorf(broker.CodeInvalid, "ssh: authorized keys: %v", err)
	}
	if err := r.load(fi); err != nil {
		return nil, err
	}
	return r, nil
}

// load reads the file described by fi. The caller holds mu, or is newKeyRing.
func (r *keyRing) load(fi os.FileInfo) error {
	data, err := os.ReadFile(r.path)
	if err != nil {
		return broker.Errorf(broker.CodeInvalid, "ssh: authorized keys: %v", err)
	}
	keys, warnings, err := parseAuthorizedKeys(r.path, data, r.roles)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		r.log.Warn("ssh: " + w)
	}
	r.keys = make(map[string]identity, len(keys))
	for _, k := range keys {
		r.keys[string(k.key.Marshal())] = k.identity
	}
	r.modTime, r.size = fi.ModTime(), fi.Size()
	r.log.Info("ssh: authorized keys loaded", "file", r.path, "keys", len(keys))
	return nil
}

// lookup returns the identity of an authorised key; ok is false for any
// other key.
func (r *keyRing) lookup(pk gossh.PublicKey) (identity, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refresh()
	if r.broken != nil {
		return identity{}, false
	}
	id, ok := r.keys[string(pk.Marshal())]
	return id, ok
}

// refresh reads the file again when it changed. The caller holds mu.
func (r *keyRing) refresh() {
	fi, err := os.Stat(r.path)
	if err == nil && r.broken == nil && fi.ModTime().Equal(r.modTime) && fi.Size() == r.size {
		return
	}
	if err == nil {
		err = r.load(fi)
	}
	if err != nil {
		if r.broken == nil || r.broken.Error() != err.Error() {
			r.log.Error("ssh: the authorized keys file is unusable; every key is refused until it is fixed", "err", err)
		}
		r.broken = err
		r.keys = nil
		return
	}
	r.broken = nil
}
