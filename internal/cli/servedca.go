package cli

import (
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/peeklock/peeklock/broker/remote"
	"github.com/peeklock/peeklock/model"
)

// A `peeklock serve` with a local CA records, per port it listens on, where
// that CA is: STATE/served/PORT holds the CA file's path (STATE is
// $XDG_STATE_HOME/peeklock, else ~/.local/state/peeklock). Every peeklock
// command that reaches a port of this machine reads the record and trusts
// that CA, so the connection string serve prints works with list, peek,
// history and connect whatever --data serve was given.

// servedDir is the directory of the records in the environment env (""
// when there is no home).
func servedDir(env environ) string {
	d := model.DefaultStateDir(env.get)
	if d == "" {
		return ""
	}
	return filepath.Join(d, "served")
}

// recordServedCA records caPath for the ports of addrs and returns a
// function that removes the records again (those that still name caPath).
// A record that cannot be written is only a convenience lost: it is
// reported through warn and nothing else happens.
func recordServedCA(env environ, caPath string, addrs []net.Addr, warn func(error)) (remove func()) {
	dir := servedDir(env)
	if dir == "" || caPath == "" || len(addrs) == 0 {
		return func() {}
	}
	abs, err := filepath.Abs(caPath)
	if err == nil {
		caPath = abs
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		warn(err)
		return func() {}
	}
	var written []string
	for _, a := range addrs {
		tcp, ok := a.(*net.TCPAddr)
		if !ok {
			continue
		}
		p := filepath.Join(dir, strconv.Itoa(tcp.Port))
		if err := os.WriteFile(p, []byte(caPath+"\n"), 0o600); err != nil {
			warn(err)
			continue
		}
		written = append(written, p)
	}
	return func() {
		for _, p := range written {
			if b, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(b)) == caPath {
				_ = os.Remove(p)
			}
		}
	}
}

// servedCAs returns the CA files that the serves of this machine recorded
// for the endpoint of conn and for adminURL (when given): only for hosts
// of this machine (localhost, loopback addresses).
func servedCAs(env environ, conn remote.ConnectionString, adminURL string) []string {
	dir := servedDir(env)
	if dir == "" {
		return nil
	}
	var ports []int
	if isLocalHost(conn.Host) {
		ports = append(ports, conn.Port)
	}
	if u, err := url.Parse(adminURL); err == nil && adminURL != "" && isLocalHost(u.Hostname()) {
		if p, err := strconv.Atoi(u.Port()); err == nil {
			ports = append(ports, p)
		}
	}
	var out []string
	for _, p := range ports {
		b, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(p)))
		if err != nil {
			continue
		}
		if ca := strings.TrimSpace(string(b)); ca != "" {
			out = append(out, ca)
		}
	}
	return out
}

// isLocalHost reports whether host names this machine: localhost or a
// loopback address.
func isLocalHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
