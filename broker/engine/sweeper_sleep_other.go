//go:build !linux

package engine

import "time"

// preciseSleep sleeps d; only Linux has the precise version (see
// timerSlack).
func preciseSleep(d time.Duration) { time.Sleep(d) }
