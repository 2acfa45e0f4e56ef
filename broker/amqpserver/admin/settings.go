package admin

import (
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// Limits that Service Bus enforces on entity settings.
const (
	maxLockDuration       = 5 * time.Minute
	maxDuplicateWindow    = 7 * 24 * time.Hour
	maxMessageSizeInKB    = 102400
	maxSizeInMegabytes    = math.MaxInt32
	maxDeliveryCountLimit = math.MaxInt32
)

// settingsReader turns description elements into settings and keeps the
// first error, which names the element.
type settingsReader struct {
	elem string // "QueueDescription", ...
	err  error
}

func (p *settingsReader) fail(code broker.Code, name, format string, args ...any) {
	if p.err == nil {
		e := broker.Errorf(code, format, args...)
		e.Message = p.elem + "." + name + ": " + e.Message
		p.err = e
	}
}

func (p *settingsReader) duration(name string, v *string, dst *time.Duration, max time.Duration) {
	if v == nil || p.err != nil {
		return
	}
	d, err := engine.ParseDuration(strings.TrimSpace(*v))
	switch {
	case err != nil:
		p.fail(broker.CodeInvalid, name, "%v", err)
	case d <= 0:
		p.fail(broker.CodeInvalid, name, "%q must be longer than zero", *v)
	case max > 0 && d > max:
		p.fail(broker.CodeInvalid, name, "%q is longer than the maximum %s", *v, engine.FormatDuration(max))
	default:
		*dst = d
	}
}

func (p *settingsReader) boolean(name string, v *string, dst *bool) {
	if v == nil || p.err != nil {
		return
	}
	switch strings.TrimSpace(*v) {
	case "true", "1":
		*dst = true
	case "false", "0":
		*dst = false
	default:
		p.fail(broker.CodeInvalid, name, "%q is not a boolean (true or false)", *v)
	}
}

func (p *settingsReader) integer(name string, v *string, min, max int64) (int64, bool) {
	if v == nil || p.err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(*v), 10, 64)
	if err != nil {
		p.fail(broker.CodeInvalid, name, "%q is not an integer", *v)
		return 0, false
	}
	if n < min || n > max {
		p.fail(broker.CodeInvalid, name, "%d is out of range [%d, %d]", n, min, max)
		return 0, false
	}
	return n, true
}

// forward reads a ForwardTo element: an entity name or an absolute URI
// such as sb://host/queue, whose path names the entity.
func (p *settingsReader) forward(name string, v *string, dst *string) {
	if v == nil || p.err != nil {
		return
	}
	path, err := forwardPath(*v)
	if err != nil {
		p.fail(broker.CodeInvalid, name, "%v", err)
		return
	}
	*dst = path
}

// forwardPath returns the entity path that a ForwardTo value names.
func forwardPath(v string) (string, error) {
	v = strings.TrimSpace(v)
	if !strings.Contains(v, "://") {
		return strings.Trim(v, "/"), nil
	}
	u, err := url.Parse(v)
	if err != nil {
		return "", broker.Errorf(broker.CodeInvalid, "%q is neither an entity name nor a URI: %v", v, err)
	}
	path := strings.Trim(u.Path, "/")
	if path == "" {
		return "", broker.Errorf(broker.CodeInvalid, "the URI %q names no entity", v)
	}
	return path, nil
}

// unsupported checks the elements that peeklock cannot honour: a status
// other than Active and partitioning (on an update, a change of
// partitioning, which Service Bus refuses in its own words).
// AutoDeleteOnIdle is checked and ignored.
func (p *settingsReader) unsupported(d *descriptionIn, update bool) {
	if d.Status != nil {
		if s := strings.TrimSpace(*d.Status); s != "" && !strings.EqualFold(s, "Active") {
			p.fail(broker.CodeNotSupported, "Status", "%q is not supported: entities here are always Active", s)
		}
	}
	var partitioned bool
	p.boolean("EnablePartitioning", d.EnablePartitioning, &partitioned)
	switch {
	case partitioned && update:
		p.fail(broker.CodeInvalid, "EnablePartitioning", "Partitioning cannot be changed for %s. It is not partitioned, as no entity here is.", strings.TrimSuffix(p.elem, "Description"))
	case partitioned:
		p.fail(broker.CodeNotSupported, "EnablePartitioning", "partitioned entities are not supported")
	}
	var idle time.Duration
	p.duration("AutoDeleteOnIdle", d.AutoDeleteOnIdle, &idle, 0)
}

// settingsOf reads the settings of an entity of kind from its description.
// Absent elements take the defaults (broker.EntitySettings.Normalize), as a
// PUT replaces the whole description, except RequiresSession, which cannot
// change and so keeps its old value on update (old is nil on create).
func settingsOf(kind broker.EntityKind, d *descriptionIn, old *broker.EntitySettings) (broker.EntitySettings, error) {
	var s broker.EntitySettings
	if old != nil {
		s.RequiresSession = old.RequiresSession
	}
	p := &settingsReader{elem: descriptionName(kind)}
	p.unsupported(d, old != nil)
	p.duration("DefaultMessageTimeToLive", d.DefaultMessageTimeToLive, &s.DefaultMessageTimeToLive, 0)
	if kind != broker.KindTopic {
		p.duration("LockDuration", d.LockDuration, &s.LockDuration, maxLockDuration)
		p.boolean("RequiresSession", d.RequiresSession, &s.RequiresSession)
		p.boolean("DeadLetteringOnMessageExpiration", d.DeadLetteringOnMessageExpiration, &s.DeadLetteringOnMessageExpiration)
		if n, ok := p.integer("MaxDeliveryCount", d.MaxDeliveryCount, 1, maxDeliveryCountLimit); ok {
			s.MaxDeliveryCount = int32(n)
		}
		p.forward("ForwardTo", d.ForwardTo, &s.ForwardTo)
		p.forward("ForwardDeadLetteredMessagesTo", d.ForwardDeadLetteredMessagesTo, &s.ForwardDeadLetteredMessagesTo)
	}
	if kind != broker.KindSubscription {
		p.boolean("RequiresDuplicateDetection", d.RequiresDuplicateDetection, &s.RequiresDuplicateDetection)
		p.duration("DuplicateDetectionHistoryTimeWindow", d.DuplicateDetectionHistoryTimeWindow, &s.DuplicateDetectionHistoryTimeWindow, maxDuplicateWindow)
		if n, ok := p.integer("MaxSizeInMegabytes", d.MaxSizeInMegabytes, 1, maxSizeInMegabytes); ok {
			s.MaxSizeInMegabytes = n
		}
		if n, ok := p.integer("MaxMessageSizeInKilobytes", d.MaxMessageSizeInKilobytes, 1, maxMessageSizeInKB); ok {
			s.MaxMessageSizeInKilobytes = n
		}
	}
	if p.err != nil {
		return broker.EntitySettings{}, p.err
	}
	return s.Normalize(), nil
}

// descriptionName returns the XML element of a kind's description.
func descriptionName(kind broker.EntityKind) string {
	switch kind {
	case broker.KindTopic:
		return "TopicDescription"
	case broker.KindSubscription:
		return "SubscriptionDescription"
	}
	return "QueueDescription"
}
