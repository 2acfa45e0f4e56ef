// Package front answers every protocol of a Service Bus namespace on one
// port, as Azure does on 5671 and 443: it tells by a connection's first
// bytes what the client speaks and hands the connection to the right
// server.
//
//	"AMQP…"            AMQP 1.0 (plain, or the SASL layer first)  -> Options.AMQP
//	0x16 (a TLS record) TLS, then the same question again inside it
//	"GET ", "PUT "…    HTTP/1.1: the admin API and /health         -> Options.HTTP
//	                    GET /$servicebus/websocket with Upgrade     -> AMQP over WebSockets
//	anything else      logged (the first bytes, quoted and cut short) and closed
//
// Nothing is free before a connection says what it is: it has
// Options.HandshakeTimeout to show its first bytes, finish the TLS
// handshake and show the first bytes inside TLS; at most
// Options.MaxPending connections may be at that stage at once, and at most
// Options.MaxHTTP HTTP connections may be open (a WebSocket stops counting
// as HTTP once upgraded: it is then an AMQP connection, under the AMQP
// server's own limits); a kept-alive one is closed after a minute without
// a request, or sooner, when the cap is reached, to make room for a new one. A client that sends TLS to a front without TLS, or
// bytes that are no protocol, gets a clean close and a log line that names
// what arrived.
//
// The WebSocket framing is github.com/coder/websocket's; the subprotocol is
// AMQPWSB10 (the AMQP WebSocket binding), and "amqp", which the Go SDK's
// examples offer.
package front
