package sqlfilter

import (
	"strings"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// sysProp is a system property (scope sys.).
type sysProp uint8

const (
	sysMessageID sysProp = iota + 1
	sysCorrelationID
	sysTo
	sysReplyTo
	sysReplyToSessionID
	sysSessionID
	sysLabel
	sysContentType
	sysPartitionKey
	sysViaPartitionKey
	sysTimeToLive
	sysScheduledEnqueueTimeUtc
	sysEnqueuedTimeUtc
	sysExpiresAtUtc
	sysSequenceNumber
	sysEnqueuedSequenceNumber
	sysDeliveryCount
	sysSize
	sysDeadLetterSource
)

// sysNames maps the lower-case names of system properties to them.
var sysNames = map[string]sysProp{
	"messageid":               sysMessageID,
	"correlationid":           sysCorrelationID,
	"to":                      sysTo,
	"replyto":                 sysReplyTo,
	"replytosessionid":        sysReplyToSessionID,
	"sessionid":               sysSessionID,
	"label":                   sysLabel,
	"subject":                 sysLabel,
	"contenttype":             sysContentType,
	"partitionkey":            sysPartitionKey,
	"viapartitionkey":         sysViaPartitionKey,
	"timetolive":              sysTimeToLive,
	"scheduledenqueuetimeutc": sysScheduledEnqueueTimeUtc,
	"enqueuedtimeutc":         sysEnqueuedTimeUtc,
	"expiresatutc":            sysExpiresAtUtc,
	"sequencenumber":          sysSequenceNumber,
	"enqueuedsequencenumber":  sysEnqueuedSequenceNumber,
	"deliverycount":           sysDeliveryCount,
	"size":                    sysSize,
	"deadlettersource":        sysDeadLetterSource,
}

// str returns the address of the string field of m that p names, or nil
// when p is not a string property. These are the system properties an action
// may set or remove.
func (p sysProp) str(m *broker.Message) *string {
	switch p {
	case sysMessageID:
		return &m.MessageID
	case sysCorrelationID:
		return &m.CorrelationID
	case sysTo:
		return &m.To
	case sysReplyTo:
		return &m.ReplyTo
	case sysReplyToSessionID:
		return &m.ReplyToSessionID
	case sysSessionID:
		return &m.SessionID
	case sysLabel:
		return &m.Subject
	case sysContentType:
		return &m.ContentType
	case sysPartitionKey:
		return &m.PartitionKey
	case sysViaPartitionKey:
		return &m.ViaPartitionKey
	}
	return nil
}

// get returns the value of p in m: NULL when it is not set.
func (p sysProp) get(m *broker.Message) value {
	if s := p.str(m); s != nil {
		if *s == "" {
			return null
		}
		return value{k: kString, s: *s}
	}
	t := func(t time.Time) value {
		if t.IsZero() {
			return null
		}
		return value{k: kOther, o: t.UTC()}
	}
	n := func(n int64) value {
		if n == 0 {
			return null
		}
		return value{k: kInt, i: n}
	}
	switch p {
	case sysTimeToLive:
		if m.TimeToLive <= 0 {
			return null
		}
		return value{k: kOther, o: m.TimeToLive}
	case sysScheduledEnqueueTimeUtc:
		return t(m.ScheduledEnqueueTime)
	case sysEnqueuedTimeUtc:
		return t(m.EnqueuedTime)
	case sysExpiresAtUtc:
		return t(m.ExpiresAt)
	case sysSequenceNumber:
		return n(m.SequenceNumber)
	case sysEnqueuedSequenceNumber:
		return n(m.EnqueuedSequenceNumber)
	case sysDeliveryCount:
		return value{k: kInt, i: int64(m.DeliveryCount)}
	case sysSize:
		return value{k: kInt, i: m.Size}
	case sysDeadLetterSource:
		if m.DeadLetterSource == "" {
			return null
		}
		return value{k: kString, s: m.DeadLetterSource}
	}
	return null
}

// userValue returns the application property name of m: the exact key, or
// else a key equal to it regardless of case (the smallest such key, so that
// the choice does not depend on map order).
func userValue(m *broker.Message, name string) (any, bool) {
	if v, ok := m.ApplicationProperties[name]; ok {
		return v, true
	}
	return foldKey(m.ApplicationProperties, name)
}

func foldKey(props map[string]any, name string) (any, bool) {
	best, found := "", false
	for k := range props {
		if strings.EqualFold(k, name) && (!found || k < best) {
			best, found = k, true
		}
	}
	if !found {
		return nil, false
	}
	return props[best], true
}

// userKey returns the key of m's application properties that name refers
// to, as userValue finds it, or name when there is none.
func userKey(props map[string]any, name string) string {
	if _, ok := props[name]; ok {
		return name
	}
	best, found := "", false
	for k := range props {
		if strings.EqualFold(k, name) && (!found || k < best) {
			best, found = k, true
		}
	}
	if !found {
		return name
	}
	return best
}
