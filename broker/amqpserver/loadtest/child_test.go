package loadtest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"testing"

	"github.com/peeklock/peeklock/internal/gctune"
	"github.com/peeklock/peeklock/internal/proctune"
)

// Environment of a child process that serves a listener (see runChild).
const (
	envChild         = "PEEKLOCK_LOADTEST_CHILD"
	envChildData     = "PEEKLOCK_LOADTEST_CHILD_DATA"
	envChildMaxConns = "PEEKLOCK_LOADTEST_CHILD_MAXCONNS"
	envChildTLSDir   = "PEEKLOCK_LOADTEST_CHILD_TLSDIR"
)

// TestMain runs the tests, or, in a child process that startPeeklock
// started, serves a listener.
func TestMain(m *testing.M) {
	if os.Getenv(envChild) == "1" {
		os.Exit(runChild(os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// runChild serves a listener as the environment says, prints "addr ADDR",
// and then answers the commands that arrive one a line on in, until in
// ends:
//
//	queues PREFIX N   create queue PREFIX (N = 0) or N numbered queues; "ok"
//	mem               "mem HEAPALLOC HEAPINUSE RSS GOROUTINES CONNECTIONS"
//	heap FILE         write a heap profile to FILE; "ok"
//	cpu               "cpu NANOSECONDS", the CPU time used so far
//	counters          "counters FAULTS SWITCHES READS WRITES RUNS", what the
//	                  process counted so far (see counters)
//	rss               "rss RSS GCS", the resident set and the garbage
//	                  collections so far, without collecting
//	profile start     start a CPU profile of a timed phase (see
//	                  envServerProfile; nothing without it); "ok"
//	profile stop      stop it and write it out; "ok"
//
// A command that fails is answered with "err MESSAGE".
func runChild(in io.Reader, out, log io.Writer) int {
	o := listenerOptions{dataDir: os.Getenv(envChildData), transport: os.Getenv(envTransport), tlsDir: os.Getenv(envChildTLSDir),
		noHistory: os.Getenv(envHistory) == "0"}
	if v := os.Getenv(envChildMaxConns); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			fmt.Fprintf(log, "loadtest child: %s=%q is not a number\n", envChildMaxConns, v)
			return 2
		}
		o.maxConnections = n
	}
	prof := &phaseProfile{path: os.Getenv(envServerProfile)}
	defer prof.stop()
	if path := os.Getenv(envServerTrace); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintf(log, "loadtest child: %v\n", err)
			return 2
		}
		defer f.Close()
		if err := trace.Start(f); err != nil {
			fmt.Fprintf(log, "loadtest child: %v\n", err)
			return 2
		}
		defer trace.Stop()
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	gctune.Start(ctx) // as peeklock serve does
	l, err := startListener(o)
	if err != nil {
		fmt.Fprintf(log, "loadtest child: %v\n", err)
		return 1
	}
	proctune.Start(ctx) // as serve does, once the store is open
	fmt.Fprintf(out, "addr %s\n", l.addr)
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		fmt.Fprintln(out, childCommand(l, prof, strings.Fields(sc.Text())))
	}
	if err := l.close(); err != nil {
		fmt.Fprintf(log, "loadtest child: close: %v\n", err)
		return 1
	}
	return 0
}

// childCommand runs one command of runChild and returns its answer.
func childCommand(l *listener, prof *phaseProfile, f []string) string {
	switch {
	case len(f) == 2 && f[0] == "profile" && f[1] == "start":
		if err := prof.start(); err != nil {
			return "err " + err.Error()
		}
		return "ok"
	case len(f) == 2 && f[0] == "profile" && f[1] == "stop":
		if err := prof.stop(); err != nil {
			return "err " + err.Error()
		}
		return "ok"
	case len(f) == 3 && f[0] == "queues":
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return "err bad count " + f[2]
		}
		if err := l.createQueues(f[1], n); err != nil {
			return "err " + strings.ReplaceAll(err.Error(), "\n", " ")
		}
		return "ok"
	case len(f) == 2 && f[0] == "heap":
		if err := writeHeapProfile(f[1]); err != nil {
			return "err " + err.Error()
		}
		return "ok"
	case len(f) == 1 && f[0] == "rss":
		return fmt.Sprintf("rss %d %d", selfRSS(), gcCount())
	case len(f) == 1 && f[0] == "cpu":
		return fmt.Sprintf("cpu %d", int64(processCPU()))
	case len(f) == 1 && f[0] == "counters":
		return countersNow().format()
	case len(f) == 1 && f[0] == "mem":
		m := l.memory()
		return fmt.Sprintf("mem %d %d %d %d %d", m.HeapAlloc, m.HeapInuse, m.RSS, m.Goroutines, m.Connections)
	}
	return fmt.Sprintf("err unknown command %q", strings.Join(f, " "))
}

// gcCount returns the garbage collections this process has done.
func gcCount() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// writeHeapProfile writes this process's heap profile to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// phaseProfile is the CPU profile of a child's timed phases: each phase
// (profile start .. profile stop) is written to a file of its own, named
// after path. Nothing happens when path is empty.
type phaseProfile struct {
	path   string
	phases int
	f      *os.File
}

// start starts the profile of the next phase.
func (p *phaseProfile) start() error {
	if p.path == "" || p.f != nil {
		return nil
	}
	p.phases++
	name := p.path
	if p.phases > 1 {
		name += "." + strconv.Itoa(p.phases)
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return err
	}
	p.f = f
	return nil
}

// stop stops the profile of the current phase, if any, and writes it out.
func (p *phaseProfile) stop() error {
	if p.f == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := p.f.Close()
	p.f = nil
	return err
}
