package cli

import "os/user"

// Who acted, as message histories and serve's logs name it: the runbook
// commands are "cli" and the OS user who ran them (on the store, through
// the engine handle that names them; on an endpoint, as the AMQP
// connection's container id), the dashboard of connect is "dashboard" and
// its user, and the demo's producers and consumers are the demo generator.
const (
	actorCLI       = "cli"
	actorDashboard = "dashboard"
	actorDemo      = "demo generator"
)

// actorName is role with the OS user who runs peeklock, e.g. "cli alice":
// the account's name, else $USER of env.
func actorName(role string, env environ) string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return role + " " + u.Username
	}
	if n := env.get("USER"); n != "" {
		return role + " " + n
	}
	return role
}
