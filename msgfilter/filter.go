// Package msgfilter is the message filter of the dashboard's / and of the
// command line's --filter: "name=value" matches a broker property
// (MessageId, CorrelationId, Subject, …) or an application property of that
// name; any other text matches messages whose id, subject, correlation id,
// properties or body contain it, case-insensitively.
package msgfilter

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/peeklock/peeklock/broker"
)

// Filter is a parsed filter; the zero Filter matches every message.
// Filters are comparable with ==.
type Filter struct {
	raw   string
	name  string // property name; "" for a text search
	value string
}

// Parse parses the text of a filter (what is typed after /).
func Parse(s string) Filter {
	s = strings.TrimSpace(s)
	f := Filter{raw: s}
	if name, value, ok := strings.Cut(s, "="); ok && strings.TrimSpace(name) != "" && !strings.ContainsAny(strings.TrimSpace(name), " \t") {
		f.name = strings.TrimSpace(name)
		f.value = strings.TrimSpace(value)
		return f
	}
	f.value = strings.ToLower(s)
	return f
}

// Property returns the filter "name=value" for exactly that value (Parse
// trims the spaces around a value).
func Property(name, value string) Filter {
	return Filter{raw: name + "=" + value, name: name, value: value}
}

// Active reports whether a filter is in force.
func (f Filter) Active() bool { return f.raw != "" }

// Raw returns the filter's text as given.
func (f Filter) Raw() string { return f.raw }

// String describes the filter for the pane title.
func (f Filter) String() string {
	if f.name != "" {
		return f.name + " = " + f.value
	}
	return "text ~ " + f.raw
}

// brokerProperty returns a broker property by name, case-insensitively
// (Label and Subject are one).
func brokerProperty(m *broker.Message, name string) (string, bool) {
	switch strings.ToLower(name) {
	case "messageid", "message-id", "id":
		return m.MessageID, true
	case "correlationid", "correlation-id":
		return m.CorrelationID, true
	case "subject", "label":
		return m.Subject, true
	case "contenttype", "content-type":
		return m.ContentType, true
	case "to":
		return m.To, true
	case "replyto", "reply-to":
		return m.ReplyTo, true
	case "replytosessionid":
		return m.ReplyToSessionID, true
	case "sessionid", "session-id":
		return m.SessionID, true
	case "partitionkey":
		return m.PartitionKey, true
	case "deliverycount":
		return fmt.Sprint(m.DeliveryCount), true
	case "sequencenumber", "seq":
		return fmt.Sprint(m.SequenceNumber), true
	case "deadlettersource":
		return m.DeadLetterSource, true
	}
	return "", false
}

// matchBodyBytes bounds how much of a body a text filter reads.
const matchBodyBytes = 64 << 10

// Match reports whether m passes the filter.
func (f Filter) Match(m *broker.Message) bool {
	if !f.Active() {
		return true
	}
	if f.name != "" {
		if v, ok := brokerProperty(m, f.name); ok {
			return v == f.value
		}
		v, ok := m.ApplicationProperties[f.name]
		if !ok {
			for k, x := range m.ApplicationProperties {
				if strings.EqualFold(k, f.name) {
					v, ok = x, true
					break
				}
			}
		}
		return ok && fmt.Sprint(v) == f.value
	}
	contains := func(s string) bool { return strings.Contains(strings.ToLower(s), f.value) }
	if contains(m.MessageID) || contains(m.Subject) || contains(m.CorrelationID) {
		return true
	}
	for k, v := range m.ApplicationProperties {
		if contains(k) || contains(fmt.Sprint(v)) {
			return true
		}
	}
	body := m.Body
	if len(body) > matchBodyBytes {
		body = body[:matchBodyBytes]
	}
	if utf8.Valid(body) {
		return bytes.Contains(bytes.ToLower(body), []byte(f.value))
	}
	return false
}

// Browse browses pages from req.FromSequence and keeps the matches until
// the window (req.Max) is full or scan messages were looked at (partial
// then says so).
func Browse(ctx context.Context, c broker.Client, req broker.BrowseRequest, f Filter, scan int) (out []*broker.Message, scanned int, partial bool, err error) {
	want := req.Max
	page := max(want*4, 100)
	from := req.FromSequence
	// A window in due order pages from the last message seen, which it
	// names (inclusive), not from the next sequence number.
	dueOrder := req.DueOrder && req.Category == broker.CategoryScheduled
	var after *broker.Message
	for len(out) < want {
		if scanned >= scan {
			return out, scanned, true, nil
		}
		ask := min(page, scan-scanned)
		if after != nil {
			ask++ // the window starts at the last message seen
		}
		msgs, err := c.Browse(ctx, broker.BrowseRequest{Entity: req.Entity, Category: req.Category, FromSequence: from, Max: ask, DueOrder: req.DueOrder})
		if err != nil {
			return out, scanned, false, err
		}
		if after != nil {
			if len(msgs) == 0 || msgs[0].SequenceNumber != after.SequenceNumber {
				break // the last message seen is gone: the order is lost
			}
			msgs = msgs[1:]
		}
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			if f.Match(m) {
				out = append(out, m)
				if len(out) == want {
					break
				}
			}
		}
		scanned += len(msgs)
		from = msgs[len(msgs)-1].SequenceNumber + 1
		if dueOrder {
			after = msgs[len(msgs)-1]
			from = after.SequenceNumber
		}
	}
	return out, scanned, false, nil
}
