package amqpserver

import (
	"io"
	"sync/atomic"
)

// countingReader counts the bytes read through it into n (the listener's
// bytes-in metric).
type countingReader struct {
	r io.Reader
	n *atomic.Uint64
}

func (c countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n.Add(uint64(k))
	return k, err
}
