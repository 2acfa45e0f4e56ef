package front

import (
	"context"
	"net/http"
	"strings"

	"github.com/coder/websocket"
)

// Subprotocols are the WebSocket subprotocols of AMQP, in order of
// preference: the binding's own name, and the name the Go SDK's examples
// offer.
var Subprotocols = []string{"AMQPWSB10", "amqp"}

// router sends the WebSocket endpoint to AMQP and every other request to
// Options.HTTP.
type router struct{ f *Front }

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// uamqp (the Python SDK's C stack) asks for the path with a trailing
	// slash, which Service Bus accepts as well.
	if strings.EqualFold(strings.TrimSuffix(r.URL.Path, "/"), WebSocketPath) {
		rt.websocket(w, r)
		return
	}
	if rt.f.opts.HTTP == nil {
		http.NotFound(w, r)
		return
	}
	rt.f.opts.HTTP.ServeHTTP(w, r)
}

// websocket upgrades a request to AMQP over WebSockets.
func (rt *router) websocket(w http.ResponseWriter, r *http.Request) {
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") && !offersSubprotocol(r) {
		rt.f.log.Info("WebSocket refused: no AMQP subprotocol", "remote", r.RemoteAddr,
			"offered", clip(r.Header.Get("Sec-WebSocket-Protocol")))
		http.Error(w, "AMQP over WebSockets needs the subprotocol AMQPWSB10 (Sec-WebSocket-Protocol)", http.StatusBadRequest)
		return
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols:    Subprotocols,
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		// Accept has answered (400, 426 or 403) and says why.
		rt.f.log.Info("WebSocket refused", "remote", r.RemoteAddr, "err", err)
		return
	}
	// The AMQP server owns the connection from here; it closes it.
	rt.f.opts.AMQP(websocket.NetConn(context.Background(), c, websocket.MessageBinary))
}

// offersSubprotocol reports whether the client offers one of Subprotocols.
func offersSubprotocol(r *http.Request) bool {
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(h, ",") {
			for _, s := range Subprotocols {
				if strings.TrimSpace(p) == s {
					return true
				}
			}
		}
	}
	return false
}

// clip cuts a client's text short for a log line.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
