package cli

import "strings"

// environ is the environment a command line runs with, in the form
// os.Environ gives it: "NAME=value" entries, the last one of a name
// winning. The commands read their variables (SERVICEBUS_CONNECTION_STRING,
// NO_COLOR, USER, and HOME and the XDG directories where the config file,
// the dashboard's state and the local CA are: package userdirs) from it,
// never from the process, so that a test sets them by passing its own.
type environ []string

// get returns the value of the variable name, "" when it is not set.
func (e environ) get(name string) string {
	for i := len(e) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}
