package broker

import (
	"strings"
	"time"
)

// EntityKind says what an entity is.
type EntityKind uint8

// Entity kinds.
const (
	KindQueue EntityKind = iota
	KindTopic
	KindSubscription
)

// String returns the kind's name.
func (k EntityKind) String() string {
	switch k {
	case KindTopic:
		return "topic"
	case KindSubscription:
		return "subscription"
	}
	return "queue"
}

// SubQueue selects an entity's main queue or one of its sub-queues: the
// dead-letter sub-queue, or the transfer dead-letter sub-queue that holds
// messages the broker could not auto-forward.
type SubQueue uint8

// Sub-queues.
const (
	SubQueueMain SubQueue = iota
	SubQueueDeadLetter
	SubQueueTransferDeadLetter
)

// String returns the sub-queue's name: "main queue", "dead-letter
// sub-queue" or "transfer dead-letter sub-queue".
func (s SubQueue) String() string {
	switch s {
	case SubQueueMain:
		return "main queue"
	case SubQueueDeadLetter:
		return "dead-letter sub-queue"
	case SubQueueTransferDeadLetter:
		return "transfer dead-letter sub-queue"
	}
	return "unknown sub-queue"
}

// Suffix returns the address suffix of the sub-queue ("" for the main queue
// and for unknown values).
func (s SubQueue) Suffix() string {
	switch s {
	case SubQueueDeadLetter:
		return DeadLetterSuffix
	case SubQueueTransferDeadLetter:
		return TransferDeadLetterSuffix
	}
	return ""
}

// SubQueueAddress returns the address of a sub-queue of the entity at path:
// "orders", "orders/$DeadLetterQueue", "orders/$Transfer/$DeadLetterQueue".
func SubQueueAddress(path string, sub SubQueue) string { return path + sub.Suffix() }

// Address suffixes of Service Bus sub-queues and the subscription separator.
const (
	DeadLetterSuffix         = "/$DeadLetterQueue"
	TransferDeadLetterSuffix = "/$Transfer/$DeadLetterQueue"
	SubscriptionsSegment     = "/Subscriptions/"
	MaxTimeToLive            = time.Duration(1<<63 - 1)
	DefaultLockDuration      = 30 * time.Second
	DefaultMaxDelivery       = 10
	DefaultDuplicateWindow   = 10 * time.Minute
)

// SplitAddress splits an address such as "orders/$DeadLetterQueue" or
// "orders/$Transfer/$DeadLetterQueue" into the entity path and the
// sub-queue. Matching of the suffix ignores case, as Service Bus does.
func SplitAddress(addr string) (path string, sub SubQueue) {
	if n := len(addr) - len(TransferDeadLetterSuffix); n > 0 && strings.EqualFold(addr[n:], TransferDeadLetterSuffix) {
		return addr[:n], SubQueueTransferDeadLetter
	}
	if n := len(addr) - len(DeadLetterSuffix); n > 0 && strings.EqualFold(addr[n:], DeadLetterSuffix) {
		return addr[:n], SubQueueDeadLetter
	}
	return addr, SubQueueMain
}

// SubscriptionPath returns the path of a subscription of a topic.
func SubscriptionPath(topic, subscription string) string {
	return topic + SubscriptionsSegment + subscription
}

// SplitSubscriptionPath splits "topic/Subscriptions/sub"; ok is false for any
// other path.
func SplitSubscriptionPath(path string) (topic, subscription string, ok bool) {
	i := strings.Index(strings.ToLower(path), strings.ToLower(SubscriptionsSegment))
	if i <= 0 {
		return "", "", false
	}
	topic, subscription = path[:i], path[i+len(SubscriptionsSegment):]
	if subscription == "" || strings.Contains(subscription, "/") {
		return "", "", false
	}
	return topic, subscription, true
}

// EntitySettings are the per-entity settings of spec/semantics.md §1, named as
// in the Service Bus emulator's Config.json. Zero durations and sizes mean
// "the default" when an entity is created; Normalize fills them in.
type EntitySettings struct {
	LockDuration                        time.Duration
	MaxDeliveryCount                    int32
	DefaultMessageTimeToLive            time.Duration
	DeadLetteringOnMessageExpiration    bool
	RequiresDuplicateDetection          bool
	DuplicateDetectionHistoryTimeWindow time.Duration
	RequiresSession                     bool
	ForwardTo                           string
	ForwardDeadLetteredMessagesTo       string
	MaxSizeInMegabytes                  int64
	MaxMessageSizeInKilobytes           int64
}

// Defaults of entity settings.
const (
	DefaultMaxSizeInMegabytes        = 1024
	DefaultMaxMessageSizeInKilobytes = 256
)

// Normalize returns s with every zero setting replaced by its default.
func (s EntitySettings) Normalize() EntitySettings {
	if s.LockDuration <= 0 {
		s.LockDuration = DefaultLockDuration
	}
	if s.MaxDeliveryCount <= 0 {
		s.MaxDeliveryCount = DefaultMaxDelivery
	}
	if s.DefaultMessageTimeToLive <= 0 {
		s.DefaultMessageTimeToLive = MaxTimeToLive
	}
	if s.DuplicateDetectionHistoryTimeWindow <= 0 {
		s.DuplicateDetectionHistoryTimeWindow = DefaultDuplicateWindow
	}
	if s.MaxSizeInMegabytes <= 0 {
		s.MaxSizeInMegabytes = DefaultMaxSizeInMegabytes
	}
	if s.MaxMessageSizeInKilobytes <= 0 {
		s.MaxMessageSizeInKilobytes = DefaultMaxMessageSizeInKilobytes
	}
	return s
}

// CorrelationFilter matches a message when every non-empty field equals the
// message's property of the same name, and every entry of Properties equals
// the application property of that name.
type CorrelationFilter struct {
	CorrelationID    string
	MessageID        string
	To               string
	ReplyTo          string
	Subject          string
	SessionID        string
	ReplyToSessionID string
	ContentType      string
	Properties       map[string]any
}

// DefaultRuleName is the name of the rule that a subscription created
// without rules gets: the TrueFilter, which takes every message.
const DefaultRuleName = "$Default"

// Rule is a subscription rule: a filter that selects messages and an
// optional action that changes the copy the subscription gets. The filter
// is the correlation filter Filter, or the SQL filter expression SQL (at
// most one of them is set), or, with neither, the TrueFilter (matches all);
// "1=0" is the FalseFilter. Action is a SQL rule action ("SET p = 1,
// REMOVE q"), empty for none. Expressions follow Service Bus's SQL filter
// and SQL action syntax (see package broker/engine/sqlfilter).
type Rule struct {
	Name   string
	Filter *CorrelationFilter
	SQL    string
	Action string
	// Parameters are the values of the SQL filter's parameters and
	// ActionParameters those of the action's, keyed by the parameter's name
	// with its @ ("@p1" for @p1 in the expression), as Service Bus's
	// SqlFilter.Parameters and SqlRuleAction.Parameters. A value is nil, a
	// string, a bool, an integer, a float, a time.Time, a time.Duration, a
	// uuid.UUID or a []byte. Every parameter an expression uses must have a
	// value (the rule is refused otherwise); unused ones are kept. Each is nil
	// or empty for none, and must be when SQL (or Action) is empty. The
	// embedded engine keeps int and uint values as int64 and uint64.
	Parameters       map[string]any
	ActionParameters map[string]any
	// CreatedAt is when the rule was added to its subscription; the zero
	// time when it is not known. The embedded engine sets it (see
	// engine.Engine.SetRules).
	CreatedAt time.Time
}

// Counts are an entity's runtime message counts. Active counts available
// (unlocked) active messages only; Locked counts every locked message of the
// main queue (a locked deferred message counts as Locked, not Deferred).
// Service Bus's ActiveMessageCount is Active+Locked.
type Counts struct {
	Active    int64
	Locked    int64
	Deferred  int64
	Scheduled int64
	// DeadLettered counts the dead-letter sub-queue (Service Bus's
	// DeadLetterMessageCount).
	DeadLettered int64
	// Transfer counts messages in transfer to another entity (Service Bus's
	// TransferMessageCount); the embedded engine forwards synchronously, so
	// it is always 0 there.
	Transfer int64
	// TransferDeadLettered counts the transfer dead-letter sub-queue:
	// messages that could not be auto-forwarded (Service Bus's
	// TransferDeadLetterMessageCount).
	TransferDeadLettered int64
	SizeBytes            int64
}

// Entity is a queue, topic or subscription with its settings and counts.
type Entity struct {
	// Path is the address: "orders", "events", "events/Subscriptions/audit".
	Path     string
	Kind     EntityKind
	Settings EntitySettings
	// Rules are a subscription's rules in order (nil for queues and
	// topics). A message reaches the subscription when a rule's filter
	// matches it, so a subscription without rules gets nothing; one created
	// without rules has the $Default TrueFilter (DefaultRuleName), as in
	// Service Bus. A remote endpoint may leave them out (see RuleReader).
	Rules  []Rule
	Counts Counts
	// CreatedAt is when the entity was created and UpdatedAt when its
	// settings, user metadata or rules last changed (CreatedAt until then).
	// The endpoint sets both; the zero time means not known.
	CreatedAt time.Time
	UpdatedAt time.Time
	// AccessedAt is when a message was last sent to or received from the
	// entity, to the second; the zero time until then. The embedded engine
	// keeps it in memory only, so it is zero again after a restart.
	AccessedAt time.Time
	// UserMetadata is free text that the entity's owner attaches to it, at
	// most MaxUserMetadataLength characters.
	UserMetadata string
}

// MaxUserMetadataLength is the longest Entity.UserMetadata that Service Bus
// accepts, in UTF-16 code units (the characters of a .NET string).
const MaxUserMetadataLength = 1024
