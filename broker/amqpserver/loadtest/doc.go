// Package loadtest measures the AMQP 1.0 listener of package amqpserver
// from the outside, with the same go-amqp client that it would use against
// any other AMQP 1.0 broker. It holds only tests, benchmarks and a script:
//
//   - BenchmarkSend and BenchmarkReceive (throughput_test.go) push N 1 KiB
//     messages through one queue, pipelined, each send waiting for its
//     outcome and each received message accepted. They report msg/s, the
//     CPU time per message of the client and of the listener, and the
//     listener's page faults per message (server-faults/msg): on the VMs
//     this project runs on, the first touch of a 4 KiB page costs about
//     11 µs, so what a listener keeps or throws away per message is much
//     of its CPU time; and its context switches, read and write system
//     calls and goroutine runs (a goroutine woken to take work another
//     handed it, or a read that was waited on) per message
//     (server-switches/msg, server-reads/msg, server-writes/msg,
//     server-runs/msg), which tell how many messages each wake-up and
//     system call carries. PEEKLOCK_LOADTEST_SERVER_CPUPROFILE profiles the
//     listener during the timed phases only. The
//     target is a peeklock listener started by the benchmark, or any broker
//     that PEEKLOCK_LOADTEST_URL names (RabbitMQ with its AMQP 1.0 plugin
//     for the comparison). config_test.go lists the environment variables.
//   - compare.sh runs both benchmarks against RabbitMQ and peeklock, in
//     memory and durable, and prints the medians and the ratios.
//   - connections_test.go opens many concurrent connections, each with a
//     sender and a receiver, and reports the listener's memory per
//     connection (100 always; 1,000 with PEEKLOCK_BIG=1 or as
//     BenchmarkConnections1000).
//   - TestLatencyManyConnections (latency_test.go) runs many official Go
//     SDK clients in this process, each sending a small message every
//     interval and receiving and completing, and reports the send latency
//     (over the run and by when the sends started, so that a tail of every
//     burst is told from a few bad bursts), both processes' CPU, and the
//     listener's memory with both processes' garbage collections.
//   - settle_test.go checks that outcomes the client does not wait for are
//     all applied when the engine settles slowly.
//
// The listener under test runs in a child process of the test binary
// (child_test.go) unless PEEKLOCK_LOADTEST_INPROCESS=1, so that its memory,
// CPU time and garbage collection are its own, as a separate broker's are.
package loadtest
