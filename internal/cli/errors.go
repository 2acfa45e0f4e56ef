package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/peeklock/peeklock/broker"
)

// Exit statuses.
const (
	exitOK       = 0
	exitFailure  = 1 // what failed at run time
	exitUsage    = 2 // what the user typed wrong
	exitNoMatch  = 3 // a filter matched nothing
	exitProgName = "peeklock"
)

// usageError is a bad command line: one line on stderr and exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// usagef returns a usageError.
func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// noMatchError ends a command whose filter matched nothing: exit status 3,
// with its message on stderr.
type noMatchError struct{ msg string }

func (e noMatchError) Error() string { return e.msg }

// report prints err (if any) as one line on w and returns the exit status.
func report(w io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	msg := oneLine(err.Error())
	switch {
	case errors.As(err, new(usageError)):
		fmt.Fprintf(w, "%s: %s (see peeklock --help)\n", exitProgName, msg)
		return exitUsage
	case errors.As(err, new(noMatchError)):
		fmt.Fprintf(w, "%s: %s\n", exitProgName, msg)
		return exitNoMatch
	}
	fmt.Fprintf(w, "%s: %s\n", exitProgName, msg)
	return exitFailure
}

// localMessage returns the text of an error about a local file or the
// command line: a broker error's message without its code and tracking id,
// which mean something only for a request to a broker.
func localMessage(err error) string {
	var be *broker.Error
	if errors.As(err, &be) {
		return be.Message
	}
	return err.Error()
}

// oneLine joins the lines of s, so that every error is one line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\r", "")), " ")
}

// flagError turns an error of the flag parser into a usage error. A value
// of a secret flag (--key, --connection) is never repeated.
func flagError(err error) error {
	var inv *pflag.InvalidValueError
	if errors.As(err, &inv) {
		f := inv.GetFlag()
		cause := errors.Unwrap(inv)
		var num *strconv.NumError
		if errors.As(cause, &num) {
			cause = errors.New("not a number in range")
		}
		if isSecretFlag(f) {
			return usagef("--%s: %v", f.Name, cause)
		}
		return usagef("--%s %q: %v", f.Name, inv.GetValue(), cause)
	}
	var ne *pflag.NotExistError
	if errors.As(err, &ne) && len(ne.GetSpecifiedShortnames()) > 1 {
		// -bogus: a long flag with one dash, not the shorthands b, o, g…
		name, _, _ := strings.Cut(ne.GetSpecifiedShortnames(), "=")
		return usagef("unknown flag: -%s", name)
	}
	return usageError{err.Error()}
}

// secretAnnotation marks a flag whose value is a secret.
const secretAnnotation = "peeklock_secret"

// isSecretFlag reports whether f holds a secret.
func isSecretFlag(f *pflag.Flag) bool {
	_, ok := f.Annotations[secretAnnotation]
	return ok
}

// markSecret marks the flag name of fs as holding a secret.
func markSecret(fs *pflag.FlagSet, name string) {
	_ = fs.SetAnnotation(name, secretAnnotation, []string{"true"})
}
