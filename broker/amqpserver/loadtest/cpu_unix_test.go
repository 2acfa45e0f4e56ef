//go:build unix

package loadtest

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// countersNow returns what this process counted so far: page faults
// (minor and major) and context switches (voluntary and not) from
// getrusage, read and write system calls from Linux's /proc/self/io (0
// elsewhere), goroutine runs from the runtime.
func countersNow() counters {
	var c counters
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		c.faults = ru.Minflt + ru.Majflt
		c.switches = ru.Nvcsw + ru.Nivcsw
	}
	c.runs = goroutineRuns()
	f, err := os.Open("/proc/self/io")
	if err != nil {
		return c
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "syscr":
			c.reads = n
		case "syscw":
			c.writes = n
		}
	}
	return c
}
