package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/internal/syncbuf"
)

// result is what a run of the command line gave.
type result struct {
	stdout, stderr string
	status         int
}

// userEnv is the environment every command line of the tests starts from:
// the user's directories as TestMain (testhome) set them for the process,
// in a temporary directory, and nothing else. The commands of one test
// binary share its state directory, as one user's commands do: there a
// serve records its local CA and the commands that reach its ports find
// it (servedca.go).
func userEnv() []string {
	var env []string
	for _, name := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"} {
		env = append(env, name+"="+os.Getenv(name))
	}
	return env
}

// runCLI runs the command line in process with args, stdin, and env for
// its environment (none of the process's but the user's directories: no
// SERVICEBUS_CONNECTION_STRING, no NO_COLOR), in a fresh HOME and
// XDG_CONFIG_HOME (so that no config file of another run is read or
// written) unless env names others.
func runCLI(t *testing.T, stdin string, env []string, args ...string) result {
	t.Helper()
	home := t.TempDir()
	env = append(append(userEnv(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config")), env...)
	var out, errb syncbuf.Buffer
	status := Execute(context.Background(), args, Streams{In: strings.NewReader(stdin), Out: &out, Err: &errb, Env: env})
	return result{out.String(), errb.String(), status}
}

// cliRun is a command line running in process until its context ends, as
// an interrupt would end it: serve, tail, list --watch.
type cliRun struct {
	t        *testing.T
	cancel   context.CancelFunc
	out, err syncbuf.Buffer
	ended    chan struct{}
	status   int
}

// startCLI starts the command line args in process with the environment
// env over the user's directories (userEnv); it is stopped when the test
// ends.
func startCLI(t *testing.T, env []string, args ...string) *cliRun {
	t.Helper()
	env = append(userEnv(), env...)
	ctx, cancel := context.WithCancel(context.Background())
	r := &cliRun{t: t, cancel: cancel, ended: make(chan struct{})}
	go func() {
		defer close(r.ended)
		r.status = Execute(ctx, args, Streams{In: strings.NewReader(""), Out: &r.out, Err: &r.err, Env: env})
	}()
	t.Cleanup(func() { r.stop() })
	return r
}

// launchServe starts `peeklock serve args...` in process with the
// environment env; it is stopped when the test ends.
func launchServe(t *testing.T, env []string, args ...string) *cliRun {
	t.Helper()
	return startCLI(t, env, append([]string{"serve"}, args...)...)
}

// lines returns the complete lines written on stderr so far (serve's log).
func (r *cliRun) lines() []string {
	s := r.err.String()
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.Split(s[:i], "\n")
	}
	return nil
}

// wait returns the submatches of the first line of stderr that re
// matches, waiting up to 15 s for it.
func (r *cliRun) wait(re string) []string {
	r.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(15 * time.Second)
	for {
		lines := r.lines()
		for _, l := range lines {
			if m := rx.FindStringSubmatch(l); m != nil {
				return m
			}
		}
		select {
		case <-r.ended:
			r.t.Fatalf("the command ended (status %d) without a line matching %s:\n%s", r.status, re, strings.Join(lines, "\n"))
		default:
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("no line matching %s:\n%s", re, strings.Join(lines, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// running reports whether the command has not ended yet.
func (r *cliRun) running() bool {
	select {
	case <-r.ended:
		return false
	default:
		return true
	}
}

// stop ends the command as an interrupt does (its context ends) and
// returns its exit status.
func (r *cliRun) stop() int {
	r.cancel()
	select {
	case <-r.ended:
	case <-time.After(10 * time.Second):
		r.t.Errorf("the command did not stop when interrupted")
		return -1
	}
	return r.status
}
