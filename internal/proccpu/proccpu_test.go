package proccpu

import (
	"runtime"
	"testing"
	"time"
)

func TestUsedCountsWork(t *testing.T) {
	before, ok := Used()
	if !ok {
		t.Skip("this system does not tell a process's CPU time")
	}
	for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
		runtime.Gosched()
	}
	after, _ := Used()
	if after <= before {
		t.Fatalf("CPU time %v after 20 ms of work, %v before", after, before)
	}
}
