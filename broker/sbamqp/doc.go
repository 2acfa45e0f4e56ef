// Package sbamqp is the vocabulary of the Service Bus dialect of AMQP 1.0,
// written once for both sides of the wire: the listener
// (broker/amqpserver) that speaks it and the client (broker/remote) that
// talks to Service Bus, to the listener, or to another AMQP broker.
//
// It names the error conditions and maps them to and from broker codes
// (conditions.go), the $management and $cbs operations with the keys of
// their requests and responses (management.go), the message annotation
// keys (annotations.go), and the link properties, filters and described
// types of the dialect (links.go). The names are untyped string constants,
// so that each side uses them with its own AMQP types (the listener's
// wire.Symbol, go-amqp's ErrCond and Symbol).
//
// Shared access signatures, the tokens both sides sign or check, are the
// package broker/sas.
package sbamqp
