// Package testhome keeps a package's tests (and the programs they start)
// out of the real home and working directories: Main points HOME and the
// XDG directories at a temporary directory for the whole test binary, and
// fails the run when anything under the real home's peeklock directories
// or the working directory changed while the tests ran.
//
// Use it from a package's TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testhome.Main(m)) }
package testhome

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// goEnv are the go command's settings that derive from HOME: kept as they
// were, so that a test that builds a binary reuses the build cache.
var goEnv = []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOENV"}

// Main runs m with HOME, XDG_CONFIG_HOME, XDG_STATE_HOME, XDG_DATA_HOME and
// XDG_CACHE_HOME in a temporary directory and returns its exit status: 1
// when the tests failed or wrote under the real home's peeklock
// directories or into the working directory.
func Main(m *testing.M) int {
	watched := Watched()
	before := snapshot(watched)
	tmp, err := Isolate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testhome:", err)
		return 1
	}
	code := m.Run()
	os.RemoveAll(tmp)
	if changed := diff(before, snapshot(watched)); len(changed) > 0 {
		fmt.Fprintf(os.Stderr, "testhome: the tests wrote outside their temporary directories:\n  %s\n", strings.Join(changed, "\n  "))
		return 1
	}
	return code
}

// Isolate points HOME and the XDG directories of this process (and so of
// the programs it starts) at a new temporary directory, which it returns.
// The go command's caches stay where they were.
func Isolate() (string, error) {
	keep := map[string]string{}
	if out, err := exec.Command("go", append([]string{"env"}, goEnv...)...).Output(); err == nil {
		for i, v := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
			if i < len(goEnv) && v != "" {
				keep[goEnv[i]] = v
			}
		}
	}
	tmp, err := os.MkdirTemp("", "peeklock-home-")
	if err != nil {
		return "", err
	}
	for k, v := range keep {
		os.Setenv(k, v)
	}
	os.Setenv("HOME", tmp)
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(tmp, ".config"))
	os.Setenv("XDG_STATE_HOME", filepath.Join(tmp, ".local", "state"))
	os.Setenv("XDG_DATA_HOME", filepath.Join(tmp, ".local", "share"))
	os.Setenv("XDG_CACHE_HOME", filepath.Join(tmp, ".cache"))
	return tmp, nil
}

// Watched returns the directories no test may write into: the peeklock
// directories of the real home and XDG directories, and the working
// directory.
func Watched() []string {
	var dirs []string
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".config", "peeklock"), filepath.Join(home, ".local", "state", "peeklock"))
	}
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME"} {
		if d := os.Getenv(v); d != "" {
			dirs = append(dirs, filepath.Join(d, "peeklock"))
		}
	}
	if wd, err := os.Getwd(); err == nil {
		dirs = append(dirs, wd)
	}
	return dirs
}

// isGolden reports whether p is a golden file under a testdata directory,
// which `go test -update` rewrites on purpose.
func isGolden(p string) bool {
	return strings.Contains(filepath.ToSlash(p), "/testdata/")
}

// entry is what a snapshot knows of a file.
type entry struct {
	size int64
	mod  time.Time
}

// snapshot lists every file under dirs with its size and time.
func snapshot(dirs []string) map[string]entry {
	out := map[string]entry{}
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(p string, de fs.DirEntry, err error) error {
			if err != nil || de.IsDir() || isGolden(p) {
				return nil
			}
			if fi, err := de.Info(); err == nil {
				out[p] = entry{fi.Size(), fi.ModTime()}
			}
			return nil
		})
	}
	return out
}

// diff names the files made, changed or removed between two snapshots.
func diff(before, after map[string]entry) []string {
	var out []string
	for p, a := range after {
		if b, ok := before[p]; !ok {
			out = append(out, "made "+p)
		} else if a != b {
			out = append(out, "changed "+p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, "removed "+p)
		}
	}
	return out
}
