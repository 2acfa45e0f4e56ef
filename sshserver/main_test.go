package sshserver

import (
	"os"
	"testing"

	"github.com/peeklock/peeklock/internal/testhome"
)

// TestMain runs the tests with HOME and the XDG directories in a temporary
// directory, and fails when any wrote under the real home.
func TestMain(m *testing.M) { os.Exit(testhome.Main(m)) }
