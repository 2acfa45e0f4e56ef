package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/msgjson"
	"github.com/peeklock/peeklock/ui"
)

// messageSink writes messages in one of the output formats.
type messageSink interface {
	Write(m *broker.Message) error
	// Close writes what is buffered (and a table's or an array's end).
	Close() error
	// Count returns how many messages were written.
	Count() int
}

// newMessageSink returns the sink of format on w: a table for people, a
// JSON array, or JSON lines (the dashboard's export format).
func newMessageSink(format string, w io.Writer) messageSink {
	switch format {
	case outJSON:
		return newJSONArray(w)
	case outJSONL:
		return jsonlSink{msgjson.NewWriter(w)}
	}
	return newMessageTable(w)
}

// jsonlSink writes JSON lines.
type jsonlSink struct{ *msgjson.Writer }

func (s jsonlSink) Close() error { return s.Flush() }

// jsonArray writes a JSON array of values, one per line, as it goes.
type jsonArray struct {
	w   *bufio.Writer
	enc *json.Encoder
	n   int
}

func newJSONArray(w io.Writer) *jsonArray {
	bw := bufio.NewWriterSize(w, 64<<10)
	return &jsonArray{w: bw, enc: json.NewEncoder(bw)}
}

// Write writes m's JSON form (msgjson).
func (a *jsonArray) Write(m *broker.Message) error { return a.add(msgjson.FromMessage(m)) }

// add writes one value.
func (a *jsonArray) add(v any) error {
	sep := ","
	if a.n == 0 {
		sep = "["
	}
	if _, err := a.w.WriteString(sep); err != nil {
		return err
	}
	a.n++
	return a.enc.Encode(v)
}

func (a *jsonArray) Count() int { return a.n }

func (a *jsonArray) Close() error {
	end := "]\n"
	if a.n == 0 {
		end = "[]\n"
	}
	if _, err := a.w.WriteString(end); err != nil {
		return err
	}
	return a.w.Flush()
}

// messageTable writes messages as a table for people.
type messageTable struct {
	tw *tabwriter.Writer
	n  int
}

func newMessageTable(w io.Writer) *messageTable {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tMESSAGE-ID\tENQUEUED (UTC)\tDELIVERIES\tSTATE\tSUBJECT\tREASON\tBODY")
	return &messageTable{tw: tw}
}

func (t *messageTable) Write(m *broker.Message) error {
	t.n++
	state := m.State.String()
	if m.SubQueue != broker.SubQueueMain {
		state = m.SubQueue.String()
	}
	if m.Locked() || !m.LockedUntil.IsZero() {
		state = "Locked"
	}
	_, err := fmt.Fprintf(t.tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", m.SequenceNumber, cell(m.MessageID, 40),
		timeCell(m.EnqueuedTime), m.DeliveryCount, state, cell(m.Subject, 30), cell(m.DeadLetterReason(), 30), bodyCell(m))
	return err
}

func (t *messageTable) Count() int { return t.n }

func (t *messageTable) Close() error { return t.tw.Flush() }

// Flush writes the rows so far (tail shows each as it arrives).
func (t *messageTable) Flush() error { return t.tw.Flush() }

// cell makes s fit one table cell of at most n characters.
func cell(s string, n int) string {
	s = ui.Sanitize(s)
	if s == "" {
		return "-"
	}
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n-1]) + "…"
	}
	return strings.ReplaceAll(s, "\t", " ")
}

// timeCell shows a time in UTC to the second.
func timeCell(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

// bodyCell shows the start of a text body, or the size of another.
func bodyCell(m *broker.Message) string {
	if m.BodyKind == broker.BodyData && utf8.Valid(m.Body) {
		b := m.Body[:min(len(m.Body), 256)]
		return cell(strings.Join(strings.Fields(strings.ToValidUTF8(string(b), "")), " "), 50)
	}
	return fmt.Sprintf("<%d bytes, %s>", len(m.Body), m.BodyKind)
}

// writeResult writes the result v of a command: its JSON in json and
// jsonl, else the line text returns.
func writeResult(w io.Writer, format string, v any, text func() string) error {
	if format == outJSON || format == outJSONL {
		return json.NewEncoder(w).Encode(v)
	}
	_, err := fmt.Fprintln(w, text())
	return err
}
