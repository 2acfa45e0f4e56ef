package sshserver

import "fmt"

// actor names an SSH session in the histories of the messages it touches:
// the user it logged in as, its key's fingerprint and the key's comment,
// e.g. `ssh alice (key SHA256:…, "alice@laptop")`.
func (id identity) actor(user string) string {
	s := fmt.Sprintf("ssh %s (key %s", user, id.Fingerprint)
	if id.Comment != "" {
		s += fmt.Sprintf(", %q", id.Comment)
	}
	return s + ")"
}
