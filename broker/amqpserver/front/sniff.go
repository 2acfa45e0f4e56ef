package front

import (
	"bytes"
	"net"
	"strconv"
)

// protocol is what a connection's first bytes say it speaks.
type protocol uint8

const (
	protoUnknown protocol = iota
	protoAMQP
	protoTLS
	protoHTTP
)

func (p protocol) String() string {
	switch p {
	case protoAMQP:
		return "AMQP"
	case protoTLS:
		return "TLS"
	case protoHTTP:
		return "HTTP"
	}
	return "unknown"
}

// recordTypeHandshake is the first byte of a TLS ClientHello record.
const recordTypeHandshake = 0x16

// sniffLen is the most bytes sniffing reads before it must decide: the
// longest HTTP method with its space.
const sniffLen = 8

var amqpPrefix = []byte("AMQP")

// httpMethods are the request lines HTTP/1.1 clients start with.
var httpMethods = [][]byte{
	[]byte("GET "), []byte("PUT "), []byte("POST "), []byte("HEAD "), []byte("DELETE "),
	[]byte("OPTIONS "), []byte("PATCH "), []byte("TRACE "), []byte("CONNECT "),
}

// classify tells the protocol of a connection from the bytes read so far;
// more is true when it cannot tell yet and more bytes would help.
func classify(b []byte) (p protocol, more bool) {
	if len(b) == 0 {
		return protoUnknown, true
	}
	if b[0] == recordTypeHandshake {
		return protoTLS, false
	}
	if bytes.HasPrefix(b, amqpPrefix) {
		return protoAMQP, false
	}
	if len(b) < len(amqpPrefix) && bytes.HasPrefix(amqpPrefix, b) {
		return protoUnknown, true
	}
	undecided := false
	for _, m := range httpMethods {
		if bytes.HasPrefix(b, m) {
			return protoHTTP, false
		}
		if len(b) < len(m) && bytes.HasPrefix(m, b) {
			undecided = true
		}
	}
	return protoUnknown, undecided
}

// sniff reads from nc until classify decides, and returns the protocol and
// every byte read (which the connection's reader must see again). heard,
// when not nil, is called once, when the first bytes arrive.
func sniff(nc net.Conn, heard func()) (protocol, []byte, error) {
	buf := make([]byte, 0, sniffLen)
	for {
		p, more := classify(buf)
		if !more || len(buf) == cap(buf) {
			return p, buf, nil
		}
		n, err := nc.Read(buf[len(buf):cap(buf)])
		if len(buf) == 0 && n > 0 && heard != nil {
			heard()
		}
		buf = buf[:len(buf)+n]
		if err != nil {
			if p, more := classify(buf); !more {
				return p, buf, nil
			}
			return protoUnknown, buf, err
		}
	}
}

// maxShown bounds the bytes a log line quotes.
const maxShown = 16

// show quotes the first bytes of a connection for a log line: printable
// ASCII as is, everything else escaped, cut after maxShown bytes.
func show(b []byte) string {
	if len(b) > maxShown {
		return strconv.QuoteToASCII(string(b[:maxShown])) + "…"
	}
	return strconv.QuoteToASCII(string(b))
}

// prefixConn is a connection whose first bytes were read already: Read
// returns them before reading on.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// withPrefix returns nc with prefix put back in front.
func withPrefix(nc net.Conn, prefix []byte) net.Conn {
	if len(prefix) == 0 {
		return nc
	}
	return &prefixConn{Conn: nc, prefix: prefix}
}
