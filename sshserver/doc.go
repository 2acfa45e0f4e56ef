// Package sshserver serves the peeklock dashboard over SSH for on-call
// triage: `peeklock serve --ssh ADDR` lets the holders of authorised keys
// inspect queues and, with the operator role, settle, resubmit and purge.
//
// Each SSH session runs its own Bubble Tea program on the session's pty (the
// pty's TERM chooses the colour profile; window changes re-render at the new
// size) over one broker client shared by every session. The shared client is
// wrapped per session: a session records the locks it receives and abandons
// the ones it still holds when it ends (and gives back the session locks it
// took), writes an audit line for every
// operation that changes something, has its own event subscription, and
// cannot close the shared client.
//
// Authentication is by public key only, against an OpenSSH authorized_keys
// file that is read again when it changes. Every key has a role: operator,
// or read-only, the default for a key the configuration does not name. The
// role is enforced where operations run: a read-only session's client is
// wrapped with broker.ReadOnly, so a key press that reaches the dashboard
// still cannot change anything.
//
// The host key is an ed25519 key generated on first start and kept, mode
// 0600, at Config.HostKeyPath (normally <data dir>/ssh_host_ed25519_key), so
// clients see the same host key after a restart.
package sshserver
