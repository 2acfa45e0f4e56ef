package loadtest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// childStopWait bounds how long a child may take to close its listener
// and store once told to stop, before it is killed.
const childStopWait = time.Minute

// server is a peeklock listener under test, in this process or a child.
type server interface {
	// URL is the amqp:// URL with SASL PLAIN credentials of full access.
	URL() string
	// CreateQueues creates queue prefix (n = 0) or n numbered queues.
	CreateQueues(prefix string, n int) error
	// Memory measures the listener's process after a garbage collection.
	Memory() (serverMemory, error)
	// CPU returns the CPU time the listener's process used so far, and
	// false if that process is this one.
	CPU() (time.Duration, bool, error)
	// Profile starts (on) or stops the listener's CPU profile of a timed
	// phase, when envServerProfile asks for one; nothing in this process.
	Profile(on bool) error
	// Close stops the listener.
	Close() error
}

// inProcess is a server in this process; its memory includes the
// client's.
type inProcess struct{ l *listener }

func (s inProcess) URL() string                             { return s.l.url() }
func (s inProcess) CreateQueues(prefix string, n int) error { return s.l.createQueues(prefix, n) }
func (s inProcess) Memory() (serverMemory, error)           { return s.l.memory(), nil }
func (s inProcess) CPU() (time.Duration, bool, error)       { return processCPU(), false, nil }
func (s inProcess) Profile(bool) error                      { return nil }
func (s inProcess) Close() error                            { return s.l.close() }

// child is a server in a child process running this test binary.
type child struct {
	transport string
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	addr      string
	exit      chan error

	mu  sync.Mutex // one command at a time
	out *bufio.Reader
}

// startPeeklock starts a peeklock listener, in a child process unless
// inProc; it is stopped at the end of tb.
func startPeeklock(tb testing.TB, o listenerOptions, inProc bool) server {
	tb.Helper()
	var s server
	if inProc {
		l, err := startListener(o)
		if err != nil {
			tb.Fatal(err)
		}
		s = inProcess{l}
	} else {
		c, err := startChild(o)
		if err != nil {
			tb.Fatal(err)
		}
		s = c
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("stopping the listener: %v", err)
		}
	})
	return s
}

// startChild starts a child process serving a listener and waits for its
// address.
func startChild(o listenerOptions) (*child, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"=1", envChildData+"="+o.dataDir,
		envChildMaxConns+"="+strconv.Itoa(o.maxConnections), envTransport+"="+o.transport, envChildTLSDir+"="+o.tlsDir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{transport: o.transport, cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout), exit: make(chan error, 1)}
	line, err := c.out.ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "addr ")
	if err != nil || !ok {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("the listener's child process did not start: read %q, %v", line, err)
	}
	c.addr = addr
	go func() { c.exit <- cmd.Wait() }()
	return c, nil
}

// URL implements server.
func (c *child) URL() string {
	return (&listener{addr: c.addr, transport: c.transport}).url()
}

// command sends one command and returns the answer without its "ok" or
// "err".
func (c *child) command(line string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := fmt.Fprintln(c.stdin, line); err != nil {
		return "", fmt.Errorf("the listener's child process: %w", err)
	}
	answer, err := c.out.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("the listener's child process: %w", err)
	}
	answer = strings.TrimSpace(answer)
	if msg, ok := strings.CutPrefix(answer, "err "); ok {
		return "", errors.New(msg)
	}
	return answer, nil
}

// CreateQueues implements server.
func (c *child) CreateQueues(prefix string, n int) error {
	_, err := c.command(fmt.Sprintf("queues %s %d", prefix, n))
	return err
}

// Memory implements server.
func (c *child) Memory() (serverMemory, error) {
	answer, err := c.command("mem")
	if err != nil {
		return serverMemory{}, err
	}
	var m serverMemory
	if _, err := fmt.Sscanf(answer, "mem %d %d %d %d %d", &m.HeapAlloc, &m.HeapInuse, &m.RSS, &m.Goroutines, &m.Connections); err != nil {
		return serverMemory{}, fmt.Errorf("the listener's child process answered %q: %w", answer, err)
	}
	return m, nil
}

// CPU implements server.
func (c *child) CPU() (time.Duration, bool, error) {
	answer, err := c.command("cpu")
	if err != nil {
		return 0, false, err
	}
	var ns int64
	if _, err := fmt.Sscanf(answer, "cpu %d", &ns); err != nil {
		return 0, false, fmt.Errorf("the listener's child process answered %q: %w", answer, err)
	}
	return time.Duration(ns), true, nil
}

// Counters returns what the child counted so far (see counters).
func (c *child) Counters() (counters, error) {
	answer, err := c.command("counters")
	if err != nil {
		return counters{}, err
	}
	n, err := parseCounters(answer)
	if err != nil {
		return counters{}, fmt.Errorf("the listener's child process answered %q: %w", answer, err)
	}
	return n, nil
}

// Profile implements server.
func (c *child) Profile(on bool) error {
	line := map[bool]string{true: "profile start", false: "profile stop"}[on]
	answer, err := c.command(line)
	if err == nil && answer != "ok" {
		err = fmt.Errorf("the listener's child process answered %q to %q", answer, line)
	}
	return err
}

// Close implements server: it ends the child's input, so that the child
// closes its listener and store and exits, and kills it if it takes longer
// than childStopWait.
func (c *child) Close() error {
	_ = c.stdin.Close()
	select {
	case err := <-c.exit:
		if err != nil {
			return fmt.Errorf("the listener's child process: %w", err)
		}
		return nil
	case <-time.After(childStopWait):
		_ = c.cmd.Process.Kill()
		<-c.exit
		return fmt.Errorf("the listener's child process did not stop within %v and was killed", childStopWait)
	}
}
