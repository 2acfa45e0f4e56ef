package msgjson

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/peeklock/peeklock/broker"
)

// Writer writes messages as JSON lines, buffered: Flush at the end.
type Writer struct {
	w   *bufio.Writer
	enc *json.Encoder
	n   int
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer {
	bw := bufio.NewWriterSize(w, 64<<10)
	return &Writer{w: bw, enc: json.NewEncoder(bw)}
}

// Write writes m as one line.
func (w *Writer) Write(m *broker.Message) error {
	if err := w.enc.Encode(FromMessage(m)); err != nil {
		return err
	}
	w.n++
	return nil
}

// Count returns how many messages were written.
func (w *Writer) Count() int { return w.n }

// Flush writes what is buffered.
func (w *Writer) Flush() error { return w.w.Flush() }

// Reader reads messages from JSON lines; blank lines are skipped.
type Reader struct {
	s    *bufio.Scanner
	line int
}

// maxLine bounds one line: a message of up to 100 MB (Service Bus
// premium's largest), base64-encoded, with its properties.
const maxLine = 160 << 20

// NewReader returns a Reader on r.
func NewReader(r io.Reader) *Reader {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &Reader{s: s}
}

// Line returns the line number of the message Next returned last.
func (r *Reader) Line() int { return r.line }

// Next returns the next message to send (Message.ToMessage), or io.EOF at
// the end. An error names the line.
func (r *Reader) Next() (*broker.Message, error) {
	for r.s.Scan() {
		r.line++
		b := r.s.Bytes()
		if len(trimSpace(b)) == 0 {
			continue
		}
		j, err := Unmarshal(b)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", r.line, err)
		}
		m, err := j.ToMessage()
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", r.line, err)
		}
		return m, nil
	}
	if err := r.s.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", r.line+1, err)
	}
	return nil, io.EOF
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
