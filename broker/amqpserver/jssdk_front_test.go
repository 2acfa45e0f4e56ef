package amqpserver

import (
	"testing"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// The official JavaScript SDK against the listener behind a front, trusting
// the local CA through NODE_EXTRA_CA_CERTS and nothing else adapted.

const transportReceived = `[{"body": "over the wire", "bodyType": "string", "messageId": "t1", "sequenceNumber": 1, "deliveryCount": 0, "state": "active"}]`

// TestJSSDKOverTLS: without UseDevelopmentEmulator the SDK (rhea) opens TLS
// to the endpoint's host and port.
func TestJSSDKOverTLS(t *testing.T) {
	env := newFrontEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	got := runNodeEnv(t, env.testEnv, []string{"PEEKLOCK_CONNECTION_STRING=" + env.tlsConnString(), "NODE_EXTRA_CA_CERTS=" + env.caPath}, "transport.mjs", "q")
	checkJSON(t, got, `{"received": `+transportReceived+`, "websockets": false}`)
}

// TestJSSDKOverWebSockets: webSocketOptions with the ws package; the SDK
// dials wss://HOST:PORT/$servicebus/websocket with subprotocol AMQPWSB10.
func TestJSSDKOverWebSockets(t *testing.T) {
	env := newFrontEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	got := runNodeEnv(t, env.testEnv, []string{"PEEKLOCK_CONNECTION_STRING=" + env.tlsConnString(), "NODE_EXTRA_CA_CERTS=" + env.caPath,
		"PEEKLOCK_WEBSOCKETS=1"}, "transport.mjs", "q")
	checkJSON(t, got, `{"received": `+transportReceived+`, "websockets": true}`)
}
