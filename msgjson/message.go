// Package msgjson is the JSON form of a message that the dashboard copies
// (y) and exports (x) and that the command line's peek, export and import
// read and write: every broker property, the application properties, and
// the body as text when it is UTF-8 (Body) or else as base64 (BodyBase64).
// An export is JSON lines, one message per line (Writer, Reader).
package msgjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/peeklock/peeklock/broker"
)

// Message is the JSON form of a message.
type Message struct {
	SequenceNumber          int64          `json:"SequenceNumber"`
	MessageID               string         `json:"MessageId,omitempty"`
	ContentType             string         `json:"ContentType,omitempty"`
	CorrelationID           string         `json:"CorrelationId,omitempty"`
	Subject                 string         `json:"Subject,omitempty"`
	To                      string         `json:"To,omitempty"`
	ReplyTo                 string         `json:"ReplyTo,omitempty"`
	ReplyToSessionID        string         `json:"ReplyToSessionId,omitempty"`
	SessionID               string         `json:"SessionId,omitempty"`
	PartitionKey            string         `json:"PartitionKey,omitempty"`
	ViaPartitionKey         string         `json:"ViaPartitionKey,omitempty"`
	TimeToLive              string         `json:"TimeToLive,omitempty"`
	ScheduledEnqueueTimeUtc *time.Time     `json:"ScheduledEnqueueTimeUtc,omitempty"`
	EnqueuedSequenceNumber  int64          `json:"EnqueuedSequenceNumber,omitempty"`
	EnqueuedTimeUtc         *time.Time     `json:"EnqueuedTimeUtc,omitempty"`
	ExpiresAtUtc            *time.Time     `json:"ExpiresAtUtc,omitempty"`
	LockedUntilUtc          *time.Time     `json:"LockedUntilUtc,omitempty"`
	DeliveryCount           uint32         `json:"DeliveryCount"`
	DeadLetterSource        string         `json:"DeadLetterSource,omitempty"`
	State                   string         `json:"State"`
	Size                    int64          `json:"Size"`
	ApplicationProperties   map[string]any `json:"ApplicationProperties,omitempty"`
	BodyKind                string         `json:"BodyKind"`
	Body                    *string        `json:"Body,omitempty"`
	BodyBase64              []byte         `json:"BodyBase64,omitempty"`
	// DataSections are the lengths of the data sections the body was sent
	// as, when more than one (broker.Message.DataSections).
	DataSections []int `json:"DataSections,omitempty"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// FromMessage returns the JSON form of m.
func FromMessage(m *broker.Message) Message {
	j := Message{
		SequenceNumber: m.SequenceNumber, MessageID: m.MessageID, ContentType: m.ContentType,
		CorrelationID: m.CorrelationID, Subject: m.Subject, To: m.To, ReplyTo: m.ReplyTo,
		ReplyToSessionID: m.ReplyToSessionID, SessionID: m.SessionID, PartitionKey: m.PartitionKey,
		ViaPartitionKey: m.ViaPartitionKey, ScheduledEnqueueTimeUtc: timePtr(m.ScheduledEnqueueTime),
		EnqueuedSequenceNumber: m.EnqueuedSequenceNumber, EnqueuedTimeUtc: timePtr(m.EnqueuedTime),
		ExpiresAtUtc: timePtr(m.ExpiresAt), LockedUntilUtc: timePtr(m.LockedUntil),
		DeliveryCount: m.DeliveryCount, DeadLetterSource: m.DeadLetterSource, State: m.State.String(),
		Size: m.Size, ApplicationProperties: m.ApplicationProperties, BodyKind: m.BodyKind.String(),
		DataSections: m.DataSections,
	}
	if m.TimeToLive > 0 && m.TimeToLive < broker.MaxTimeToLive {
		j.TimeToLive = m.TimeToLive.String()
	}
	if m.BodyKind == broker.BodyData && utf8.Valid(m.Body) {
		s := string(m.Body)
		j.Body = &s
	} else if len(m.Body) > 0 {
		j.BodyBase64 = m.Body
	}
	return j
}

// ToMessage returns the message to send again that j describes: what a
// sender sets (ids, subject, addresses, session, partition key, time to
// live, scheduled time, application properties, body), without what the
// broker set and without the dead-letter properties, as a resubmit sends
// it. JSON does not keep every type of an application property: whole
// numbers come back as int64, other numbers as float64, and lists or
// objects (a UUID, say) as their JSON text.
func (j Message) ToMessage() (*broker.Message, error) {
	m := &broker.Message{
		MessageID: j.MessageID, ContentType: j.ContentType, CorrelationID: j.CorrelationID,
		Subject: j.Subject, To: j.To, ReplyTo: j.ReplyTo, ReplyToSessionID: j.ReplyToSessionID,
		SessionID: j.SessionID, PartitionKey: j.PartitionKey, ViaPartitionKey: j.ViaPartitionKey,
	}
	if j.TimeToLive != "" {
		ttl, err := time.ParseDuration(j.TimeToLive)
		if err != nil || ttl <= 0 {
			return nil, fmt.Errorf("TimeToLive %q is not a positive duration", j.TimeToLive)
		}
		m.TimeToLive = ttl
	}
	if j.ScheduledEnqueueTimeUtc != nil {
		m.ScheduledEnqueueTime = *j.ScheduledEnqueueTimeUtc
	}
	switch j.BodyKind {
	case "", "data":
		m.BodyKind = broker.BodyData
	case "amqp-value":
		m.BodyKind = broker.BodyValue
	case "amqp-sequence":
		m.BodyKind = broker.BodySequence
	default:
		return nil, fmt.Errorf("BodyKind %q is none of data, amqp-value and amqp-sequence", j.BodyKind)
	}
	switch {
	case j.Body != nil && j.BodyBase64 != nil:
		return nil, fmt.Errorf("both Body and BodyBase64 are given")
	case j.Body != nil:
		if m.BodyKind != broker.BodyData {
			return nil, fmt.Errorf("a %s body comes as BodyBase64 (its AMQP sections), not as Body text", j.BodyKind)
		}
		m.Body = []byte(*j.Body)
	default:
		m.Body = j.BodyBase64
	}
	if len(j.DataSections) > 0 {
		m.DataSections = j.DataSections
		if err := m.CheckDataSections(); err != nil {
			return nil, fmt.Errorf("DataSections %v do not describe the body of %d bytes", j.DataSections, len(m.Body))
		}
	}
	if len(j.ApplicationProperties) > 0 {
		m.ApplicationProperties = make(map[string]any, len(j.ApplicationProperties))
		for k, v := range j.ApplicationProperties {
			p, err := property(v)
			if err != nil {
				return nil, fmt.Errorf("application property %q: %w", k, err)
			}
			m.ApplicationProperties[k] = p
		}
		delete(m.ApplicationProperties, broker.PropDeadLetterReason)
		delete(m.ApplicationProperties, broker.PropDeadLetterErrorDescription)
	}
	return m, nil
}

// property turns a decoded JSON value (numbers as json.Number) into an
// application property value.
func property(v any) (any, error) {
	switch x := v.(type) {
	case nil, string, bool:
		return x, nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %s is out of range", x)
		}
		return f, nil
	case float64:
		return x, nil
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		return string(b), nil
	}
}

// Unmarshal decodes one JSON object of the form FromMessage writes,
// refusing unknown fields (a typo would otherwise be lost silently).
func Unmarshal(data []byte) (Message, error) {
	var j Message
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return j, fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return j, fmt.Errorf("more than one JSON value")
	}
	return j, nil
}
