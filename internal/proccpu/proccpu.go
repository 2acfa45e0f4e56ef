// Package proccpu reads the CPU time the process has used: what
// internal/proctune steers by, and what the benchmarks divide by the
// messages they move.
package proccpu
