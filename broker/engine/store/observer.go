package store

import "time"

// Observer is told what the Pebble store writes, for metrics. Its methods
// run on the write path (Batch under the caller's locks, Synced in the
// goroutine that waits for the disk) and must return at once: count, never
// block.
type Observer interface {
	// Batch reports one batch handed to the commit pipeline: its number of
	// ops and its encoded size in bytes.
	Batch(ops, bytes int)
	// Synced reports how long a batch took from its commit to the end of its
	// disk sync (the time a durable send waits for the disk, group commit
	// included). Batches that nobody waits for are not reported, nor are
	// batches of a store opened with NoSync.
	Synced(d time.Duration)
}
