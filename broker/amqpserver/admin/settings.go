package admin

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/atom"
)

// Limits that Service Bus enforces on entity settings.
const (
	maxLockDuration       = 5 * time.Minute
	maxDuplicateWindow    = 7 * 24 * time.Hour
	minMessageSizeInKB    = 1024   // the Premium tier's smallest MaxMessageSizeInKilobytes
	maxMessageSizeInKB    = 102400 // and its largest
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

func (p *settingsReader) duration(name string, v *atom.Duration, dst *time.Duration, max time.Duration) {
	if v == nil || p.err != nil {
		return
	}
	switch d := time.Duration(*v); {
	case d <= 0:
		p.fail(broker.CodeInvalid, name, "%q must be longer than zero", atom.FormatDuration(d))
	case max > 0 && d > max:
		p.fail(broker.CodeInvalid, name, "%q is longer than the maximum %s", atom.FormatDuration(d), atom.FormatDuration(max))
	default:
		*dst = d
	}
}

func (p *settingsReader) boolean(v *atom.Bool, dst *bool) {
	if v != nil && p.err == nil {
		*dst = bool(*v)
	}
}

func (p *settingsReader) integer(name string, v *atom.Int, min, max int64) (int64, bool) {
	if v == nil || p.err != nil {
		return 0, false
	}
	if n := int64(*v); n < min || n > max {
		p.fail(broker.CodeInvalid, name, "%d is out of range [%d, %d]", n, min, max)
		return 0, false
	}
	return int64(*v), true
}

// messageSize reads MaxMessageSizeInKilobytes as Service Bus checks it: the
// Premium tier takes 1024 to 102400 and refuses any other value in these
// words, which the JavaScript SDK's live tests look for; 256, the Standard
// tier's fixed size (and the default), is taken too, and so is the
// entity's current value on an update (a client sending back what it read
// of an entity the configuration file declared with another size).
func (p *settingsReader) messageSize(v *atom.Int, old *broker.EntitySettings, dst *int64) {
	if v == nil || p.err != nil {
		return
	}
	n := int64(*v)
	if n != broker.DefaultMaxMessageSizeInKilobytes && (n < minMessageSizeInKB || n > maxMessageSizeInKB) &&
		(old == nil || n != old.MaxMessageSizeInKilobytes) {
		p.fail(broker.CodeInvalid, "MaxMessageSizeInKilobytes", "The property value for 'MaxMessageSizeInKilobytes' must be between %d and %d "+
			"(the Premium tier's sizes) or %d (the Standard tier's); %d was given", minMessageSizeInKB, maxMessageSizeInKB,
			broker.DefaultMaxMessageSizeInKilobytes, n)
		return
	}
	*dst = n
}

// forward reads a ForwardTo element: an entity name or an absolute URI
// such as sb://host/queue, whose path names the entity. A URI is kept in
// uri, its scheme and host lower-cased, to report it back as given.
func (p *settingsReader) forward(name string, v *string, dst, uri *string) {
	if v == nil || p.err != nil {
		return
	}
	path, err := broker.ForwardPath(*v)
	if err != nil {
		p.fail(broker.CodeInvalid, name, "%s", errMessage(err))
		return
	}
	*dst = path
	if t := strings.TrimSpace(*v); strings.Contains(t, "://") {
		*uri = lowerSchemeAndHost(t)
	}
}

// lowerSchemeAndHost lower-cases the scheme and the host of an absolute URI
// and keeps the rest as it is.
func lowerSchemeAndHost(u string) string {
	scheme, rest, _ := strings.Cut(u, "://")
	host, path, hasPath := strings.Cut(rest, "/")
	out := strings.ToLower(scheme) + "://" + strings.ToLower(host)
	if hasPath {
		out += "/" + path
	}
	return out
}

// status reads a Status element: Active, Disabled, SendDisabled or
// ReceiveDisabled (regardless of case).
func (p *settingsReader) status(v *string, dst *broker.EntityStatus) {
	if v == nil || p.err != nil {
		return
	}
	st, ok := broker.ParseEntityStatus(strings.TrimSpace(*v))
	if !ok {
		p.fail(broker.CodeInvalid, "Status", "%q is not an entity status (Active, Disabled, SendDisabled or ReceiveDisabled)", *v)
		return
	}
	*dst = st
}

// partitions is how many partitions Service Bus gives a partitioned entity
// of the Standard tier: a description reports its MaxSizeInMegabytes
// multiplied by it.
const partitions = 16

// minPartitionSize is the smallest size of one partition; a larger value
// that partitions divides is a total (as a description of a partitioned
// entity reports it, and a client updating what it read sends it back).
const minPartitionSize = 1024

// partitionedSize returns the size limit of a partitioned entity for the
// MaxSizeInMegabytes a client gave: per partition (multiplied by
// partitions), or already the total.
func partitionedSize(given int64) int64 {
	if given%partitions == 0 && given/partitions >= minPartitionSize {
		return given
	}
	return given * partitions
}

// entityIn is what a PUT body's description gives, whatever its kind.
type entityIn struct {
	kind        broker.EntityKind
	settings    atom.Settings
	authRules   *atom.AuthorizationRules // nil for a subscription
	defaultRule *atom.RuleDescription    // of a subscription
}

// settingsOf reads the settings of an entity from its description. Absent
// elements take the defaults (broker.EntitySettings.Normalize), as a PUT
// replaces the whole description, except RequiresSession, which cannot
// change and so keeps its old value on update (old is nil on create). A
// partitioned queue or topic has partitions times the MaxSizeInMegabytes
// given for one partition, as on Service Bus's Standard tier.
func settingsOf(kind broker.EntityKind, d *atom.Settings, old *broker.EntitySettings) (broker.EntitySettings, error) {
	var s broker.EntitySettings
	if old != nil {
		s.RequiresSession = old.RequiresSession
	}
	p := &settingsReader{elem: descriptionName(kind)}
	p.duration("DefaultMessageTimeToLive", d.DefaultMessageTimeToLive, &s.DefaultMessageTimeToLive, 0)
	p.status(d.Status, &s.Status)
	p.duration("AutoDeleteOnIdle", d.AutoDeleteOnIdle, &s.AutoDeleteOnIdle, 0)
	if s.AutoDeleteOnIdle > 0 && s.AutoDeleteOnIdle < broker.MinAutoDeleteOnIdle {
		p.fail(broker.CodeInvalid, "AutoDeleteOnIdle", "%q is shorter than the minimum %s", atom.FormatDuration(s.AutoDeleteOnIdle), atom.FormatDuration(broker.MinAutoDeleteOnIdle))
	}
	batched := true
	p.boolean(d.EnableBatchedOperations, &batched)
	s.DisableBatchedOperations = !batched
	if kind != broker.KindTopic {
		p.duration("LockDuration", d.LockDuration, &s.LockDuration, maxLockDuration)
		p.boolean(d.RequiresSession, &s.RequiresSession)
		p.boolean(d.DeadLetteringOnMessageExpiration, &s.DeadLetteringOnMessageExpiration)
		if n, ok := p.integer("MaxDeliveryCount", d.MaxDeliveryCount, 1, maxDeliveryCountLimit); ok {
			s.MaxDeliveryCount = int32(n)
		}
		p.forward("ForwardTo", d.ForwardTo, &s.ForwardTo, &s.ForwardToURI)
		p.forward("ForwardDeadLetteredMessagesTo", d.ForwardDeadLetteredMessagesTo, &s.ForwardDeadLetteredMessagesTo, &s.ForwardDeadLetteredMessagesToURI)
	}
	if kind == broker.KindTopic {
		ordered := true
		p.boolean(d.SupportOrdering, &ordered)
		s.DisableSupportOrdering = !ordered
	}
	if kind == broker.KindSubscription {
		dlq := true
		p.boolean(d.DeadLetteringOnFilterEvaluationExceptions, &dlq)
		s.DisableFilterExceptionDeadLettering = !dlq
	}
	if kind != broker.KindSubscription {
		p.boolean(d.EnablePartitioning, &s.EnablePartitioning)
		p.boolean(d.RequiresDuplicateDetection, &s.RequiresDuplicateDetection)
		p.duration("DuplicateDetectionHistoryTimeWindow", d.DuplicateDetectionHistoryTimeWindow, &s.DuplicateDetectionHistoryTimeWindow, maxDuplicateWindow)
		maxSize := int64(maxSizeInMegabytes)
		if s.EnablePartitioning {
			maxSize /= partitions
		}
		if n, ok := p.integer("MaxSizeInMegabytes", d.MaxSizeInMegabytes, 1, maxSize); ok {
			s.MaxSizeInMegabytes = n
		}
		p.messageSize(d.MaxMessageSizeInKilobytes, old, &s.MaxMessageSizeInKilobytes)
		if s.EnablePartitioning {
			if s.MaxSizeInMegabytes == 0 {
				s.MaxSizeInMegabytes = broker.DefaultMaxSizeInMegabytes
			}
			s.MaxSizeInMegabytes = partitionedSize(s.MaxSizeInMegabytes)
		}
	}
	if p.err != nil {
		return broker.EntitySettings{}, p.err
	}
	return s.Normalize(), nil
}

// authorizationRulesOf reads a description's AuthorizationRules: each a
// SharedAccessAuthorizationRule with rights (Manage, Send, Listen), a key
// name, keys and optional times. None is nil.
func authorizationRulesOf(kind broker.EntityKind, rules *atom.AuthorizationRules) ([]broker.AuthorizationRule, error) {
	if rules == nil || len(rules.Rules) == 0 {
		return nil, nil
	}
	p := &settingsReader{elem: descriptionName(kind)}
	out := make([]broker.AuthorizationRule, 0, len(rules.Rules))
	for i, in := range rules.Rules {
		name := "AuthorizationRules[" + strconv.Itoa(i) + "]"
		if t := in.Type.Local(); t != "" && t != atom.SharedAccessAuthorizationRule {
			p.fail(broker.CodeNotSupported, name, "the rule type %q is not supported; use SharedAccessAuthorizationRule", t)
			break
		}
		r := broker.AuthorizationRule{KeyName: strings.TrimSpace(in.KeyName), PrimaryKey: strings.TrimSpace(in.PrimaryKey),
			SecondaryKey: strings.TrimSpace(in.SecondaryKey)}
		for _, right := range in.Rights {
			x, ok := broker.ParseAccessRight(strings.TrimSpace(right))
			if !ok {
				p.fail(broker.CodeInvalid, name+".Rights", "%q is not an access right (Manage, Send or Listen)", right)
				break
			}
			r.Rights |= x
		}
		if in.CreatedTime != nil {
			r.CreatedTime = in.CreatedTime.Time
		}
		if in.ModifiedTime != nil {
			r.ModifiedTime = in.ModifiedTime.Time
		}
		if p.err != nil {
			break
		}
		out = append(out, r)
	}
	if p.err != nil {
		return nil, p.err
	}
	return out, nil
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
