// Package loadtest measures the AMQP 1.0 listener of package amqpserver
// from the outside, with the same go-amqp client that it would use against
// any other AMQP 1.0 broker. It holds only tests, benchmarks and a script:
//
//   - BenchmarkSend and BenchmarkReceive (throughput_test.go) push N 1 KiB
//     messages through one target, pipelined, each send waiting for its
//     outcome and each received message accepted. The target is peeklock,
//     started by the benchmark, or any broker named by PEEKLOCK_LOADTEST_URL
//     (RabbitMQ with its AMQP 1.0 plugin for the comparison).
//   - compare.sh runs both benchmarks against RabbitMQ and peeklock, in
//     memory and durable, and prints the medians and the ratios.
//   - connections_test.go opens many concurrent connections, each with a
//     sender and a receiver, and reports the listener's memory per
//     connection.
//
// The listener under test runs in a child process of the test binary by
// default, so that its memory and garbage collection are its own, as a
// separate broker's would be. The environment variables are described in
// config_test.go.
package loadtest
