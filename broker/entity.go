package broker

import (
	"net/url"
	"slices"
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
	DefaultLockDuration      = time.Minute // PT1M, as Azure and the emulator create entities
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

// EntitySettings are the per-entity settings of Service Bus, named as
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
	// ForwardToURI and ForwardDeadLetteredMessagesToURI are the absolute
	// URIs a client gave for ForwardTo and ForwardDeadLetteredMessagesTo
	// ("https://host/queue"), kept to report them back as given, as Service
	// Bus does; empty when it gave an entity name. The entity is forwarded
	// by ForwardTo and ForwardDeadLetteredMessagesTo alone (Normalize drops
	// a URI whose path does not name that entity).
	ForwardToURI                     string
	ForwardDeadLetteredMessagesToURI string
	// Status says whether the entity takes sends and receives.
	Status EntityStatus
	// AutoDeleteOnIdle is how long the entity may stay idle before the
	// broker deletes it (at least MinAutoDeleteOnIdle; MaxTimeToLive, the
	// default, for never).
	AutoDeleteOnIdle time.Duration
	// EnablePartitioning marks a partitioned queue or topic. The embedded
	// engine keeps every message in one partition (partition id 0 in the
	// top 16 bits of the sequence numbers); it cannot change once the
	// entity exists.
	EnablePartitioning bool
	// DisableBatchedOperations is EnableBatchedOperations negated, so that
	// the zero value is Service Bus's default (batched operations on). The
	// engine stores every operation at once either way.
	DisableBatchedOperations bool
	// DisableSupportOrdering is a topic's SupportOrdering negated, so that
	// the zero value is Service Bus's default (true). It is kept and
	// reported: the engine delivers in order either way.
	DisableSupportOrdering bool
	// DisableFilterExceptionDeadLettering is a subscription's
	// DeadLetteringOnFilterEvaluationExceptions negated, so that the zero
	// value is Service Bus's default (on). It is kept and reported: no
	// filter of the engine raises an exception (a SQL filter whose types do
	// not compare is unknown, so false).
	DisableFilterExceptionDeadLettering bool
}

// MinAutoDeleteOnIdle is the shortest AutoDeleteOnIdle Service Bus accepts.
const MinAutoDeleteOnIdle = 5 * time.Minute

// EntityStatus is an entity's status: whether it takes sends and receives.
// The zero value is StatusActive.
type EntityStatus uint8

// Entity statuses, as Service Bus names them.
const (
	// StatusActive: sends and receives work.
	StatusActive EntityStatus = iota
	// StatusDisabled: neither sends nor receives work (a subscription of a
	// disabled topic cannot be received from either).
	StatusDisabled
	// StatusSendDisabled: receives work, sends are refused.
	StatusSendDisabled
	// StatusReceiveDisabled: sends work, receives and settlements are
	// refused.
	StatusReceiveDisabled
)

var statusNames = [...]string{
	StatusActive:          "Active",
	StatusDisabled:        "Disabled",
	StatusSendDisabled:    "SendDisabled",
	StatusReceiveDisabled: "ReceiveDisabled",
}

// String returns the status's Service Bus name: Active, Disabled,
// SendDisabled or ReceiveDisabled ("Unknown" for other values).
func (s EntityStatus) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "Unknown"
}

// Valid reports whether s is one of the statuses above.
func (s EntityStatus) Valid() bool { return int(s) < len(statusNames) }

// CanSend reports whether the status lets messages be sent.
func (s EntityStatus) CanSend() bool { return s == StatusActive || s == StatusReceiveDisabled }

// CanReceive reports whether the status lets messages be received and
// settled.
func (s EntityStatus) CanReceive() bool { return s == StatusActive || s == StatusSendDisabled }

// ParseEntityStatus reads a status by its Service Bus name, regardless of
// case; ok is false for any other text.
func ParseEntityStatus(name string) (s EntityStatus, ok bool) {
	for i, n := range statusNames {
		if strings.EqualFold(n, name) {
			return EntityStatus(i), true
		}
	}
	return 0, false
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
	if s.AutoDeleteOnIdle <= 0 {
		s.AutoDeleteOnIdle = MaxTimeToLive
	}
	if !uriNames(s.ForwardToURI, s.ForwardTo) {
		s.ForwardToURI = ""
	}
	if !uriNames(s.ForwardDeadLetteredMessagesToURI, s.ForwardDeadLetteredMessagesTo) {
		s.ForwardDeadLetteredMessagesToURI = ""
	}
	return s
}

// uriNames reports whether the absolute URI u names the entity path (its
// path without the slashes around it, regardless of case).
func uriNames(u, path string) bool {
	if u == "" || path == "" {
		return false
	}
	p, err := ForwardPath(u)
	return err == nil && strings.EqualFold(p, path)
}

// ForwardPath returns the entity path that a forwarding target names: an
// entity name ("orders", slashes around it trimmed), or an absolute URI
// ("sb://host/orders", "https://host/orders") whose path names the entity.
func ForwardPath(v string) (string, error) {
	v = strings.TrimSpace(v)
	if !strings.Contains(v, "://") {
		return strings.Trim(v, "/"), nil
	}
	u, err := url.Parse(v)
	if err != nil {
		return "", Errorf(CodeInvalid, "%q is neither an entity name nor a URI: %v", v, err)
	}
	path := strings.Trim(u.Path, "/")
	if path == "" {
		return "", Errorf(CodeInvalid, "the URI %q names no entity", v)
	}
	return path, nil
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

// RulesByName returns a copy of rules sorted by name, regardless of case,
// as Service Bus lists a subscription's rules (over AMQP and in the
// management API's feeds), not in the order they were added.
func RulesByName(rules []Rule) []Rule {
	return slices.SortedStableFunc(slices.Values(rules), func(a, b Rule) int {
		return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
	})
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
	// Unknown is set when the endpoint could not count the entity's
	// messages (a generic AMQP broker has no such query; a Service Bus
	// credential without Manage rights may not read them): only Locked, the
	// locks this client holds, is known, and the others are zero but
	// unknown. Screens show them as "?".
	Unknown bool
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
	// entity, to the second; the zero time until then, except that a
	// subscription counts as accessed when it was created (as Service Bus
	// reports it). The embedded engine keeps it in memory only, so it is
	// zero (a subscription's CreatedAt) again after a restart.
	AccessedAt time.Time
	// UserMetadata is free text that the entity's owner attaches to it, at
	// most MaxUserMetadataLength characters.
	UserMetadata string
	// AuthorizationRules are the entity's own shared access keys (Service
	// Bus's entity-level SharedAccessAuthorizationRules), in the order
	// given; nil for none.
	AuthorizationRules []AuthorizationRule
}

// AccessRights is a set of the rights a shared access key grants.
type AccessRights uint8

// Access rights.
const (
	RightManage AccessRights = 1 << iota
	RightSend
	RightListen

	// AllRights is every right.
	AllRights = RightManage | RightSend | RightListen
)

// rightNames are the Service Bus names of the rights, in the order
// Names lists them.
var rightNames = [...]struct {
	r    AccessRights
	name string
}{{RightManage, "Manage"}, {RightSend, "Send"}, {RightListen, "Listen"}}

// Names returns the Service Bus names of the rights in r: Manage, Send,
// Listen, in that order.
func (r AccessRights) Names() []string {
	var out []string
	for _, n := range rightNames {
		if r&n.r != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// String returns the rights as Service Bus lists them: "Manage,Send,Listen".
func (r AccessRights) String() string { return strings.Join(r.Names(), ",") }

// Has reports whether r grants every right of want.
func (r AccessRights) Has(want AccessRights) bool { return r&want == want }

// ParseAccessRight reads one right by its Service Bus name, regardless of
// case; ok is false for any other text.
func ParseAccessRight(name string) (r AccessRights, ok bool) {
	for _, n := range rightNames {
		if strings.EqualFold(n.name, name) {
			return n.r, true
		}
	}
	return 0, false
}

// AuthorizationRule is an entity-level shared access key (Service Bus's
// SharedAccessAuthorizationRule): a SAS token signed with PrimaryKey or
// SecondaryKey under KeyName grants Rights on the entity.
type AuthorizationRule struct {
	KeyName      string
	PrimaryKey   string
	SecondaryKey string
	Rights       AccessRights
	// CreatedTime and ModifiedTime are as the client gave them; the zero
	// time when it gave none.
	CreatedTime  time.Time
	ModifiedTime time.Time
}

// MaxUserMetadataLength is the longest Entity.UserMetadata that Service Bus
// accepts, in UTF-16 code units (the characters of a .NET string).
const MaxUserMetadataLength = 1024
