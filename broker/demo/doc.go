// Package demo runs simulated producers and consumers against a broker, so
// that `peeklock` alone shows messages moving, locks counting down and
// expiring, redelivery, deferral, scheduling and dead-lettering at the
// maximum delivery count within a minute, a SQL subscription rule with an
// action, and a session-aware queue worked session by session.
package demo
