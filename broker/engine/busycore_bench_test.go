package engine

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"
)

// spinnerEnv marks the test binary's child that keeps one core busy for a
// benchmark (TestSpinnerChild).
const spinnerEnv = "PEEKLOCK_BENCH_SPINNER"

// startSpinner starts a child process that spins on one core until the
// returned stop is called (or, at the latest, until the benchmark's process
// is gone: the child stops when its standard input closes). The child's
// CPU is not the benchmark's: proccpu.Used counts this process only.
//
// One worker of the engine loop on a two-core machine leaves a core idle,
// and the Go runtime uses it for the collector's marking and sweeping,
// which then finish sooner and cost less in all; eight workers leave no
// core idle. A spinner on the other core compares the two fairly.
func startSpinner(b *testing.B) (stop func()) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSpinnerChild$", "-test.count=1", "-test.timeout=30m")
	cmd.Env = append(os.Environ(), spinnerEnv+"=1", "GOMAXPROCS=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	stop = func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if sc.Text() == "SPINNING" {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return stop
		}
	}
	stop()
	b.Fatal("the spinner child stopped before it spun")
	return nil
}

// TestSpinnerChild is startSpinner's child: it keeps one core busy until
// its standard input closes.
func TestSpinnerChild(t *testing.T) {
	if os.Getenv(spinnerEnv) == "" {
		t.Skip("run by startSpinner as a child process")
	}
	var done atomic.Bool
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		done.Store(true)
	}()
	os.Stdout.WriteString("SPINNING\n")
	end := time.Now().Add(20 * time.Minute)
	for n := 0; !done.Load(); n++ {
		if n%1_000_000 == 0 && time.Now().After(end) {
			return
		}
	}
}
