package loadtest

import "fmt"

// counters are what a listener's process counted so far besides its CPU
// time, which tell what that time went to: page faults (in this VM each
// fresh page costs more CPU than a kilobyte of decoding), context switches
// (a goroutine handing work to another that sleeps wakes a thread), and
// read and write system calls (one per frame batch read or written).
type counters struct {
	faults, switches, reads, writes int64
}

// sub returns the counts of c since earlier.
func (c counters) sub(earlier counters) counters {
	return counters{c.faults - earlier.faults, c.switches - earlier.switches, c.reads - earlier.reads, c.writes - earlier.writes}
}

func (c counters) add(o counters) counters {
	return counters{c.faults + o.faults, c.switches + o.switches, c.reads + o.reads, c.writes + o.writes}
}

// format is the answer of a child's "counters" command.
func (c counters) format() string {
	return fmt.Sprintf("counters %d %d %d %d", c.faults, c.switches, c.reads, c.writes)
}

// parseCounters reads an answer of format.
func parseCounters(answer string) (counters, error) {
	var c counters
	_, err := fmt.Sscanf(answer, "counters %d %d %d %d", &c.faults, &c.switches, &c.reads, &c.writes)
	return c, err
}
