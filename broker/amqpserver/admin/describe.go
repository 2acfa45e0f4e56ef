package admin

import (
	"math"
	"strings"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/atom"
)

// clamp32 fits a count into the int32 the SDKs read.
func clamp32(n int64) atom.Int {
	return atom.Int(min(max(n, 0), math.MaxInt32))
}

// countDetails maps the engine's counts to Service Bus's: ActiveMessageCount
// is available plus locked messages (broker.Counts); deferred messages count
// in MessageCount only.
func countDetails(c broker.Counts) atom.CountDetails {
	return atom.CountDetails{
		ActiveMessageCount:             clamp32(c.Active + c.Locked),
		DeadLetterMessageCount:         clamp32(c.DeadLettered),
		ScheduledMessageCount:          clamp32(c.Scheduled),
		TransferMessageCount:           clamp32(c.Transfer),
		TransferDeadLetterMessageCount: clamp32(c.TransferDeadLettered),
	}
}

// messageCount is Service Bus's MessageCount: every message of the entity,
// its dead-letter and transfer dead-letter sub-queues included.
func messageCount(c broker.Counts) atom.Int {
	return atom.Int(c.Active + c.Locked + c.Deferred + c.Scheduled + c.DeadLettered + c.Transfer + c.TransferDeadLettered)
}

// forwardURI writes a forwarding target as Service Bus reports it: the
// absolute URI the client gave (uri), or one built from the entity path
// (sb://host/path); nil for none.
func forwardURI(host, path, uri string) *string {
	switch {
	case path == "":
		return nil
	case uri != "":
		return &uri
	}
	return addr("sb://" + host + "/" + path)
}

// optional returns a pointer to s, or nil for "".
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// addr returns a pointer to v.
func addr[T any](v T) *T { return &v }

// duration is a duration element.
func duration(d time.Duration) *atom.Duration { return addr(atom.Duration(d)) }

// integer is an integer element.
func integer[T int32 | int64](n T) *atom.Int { return addr(atom.Int(n)) }

// boolean is a boolean element.
func boolean(b bool) *atom.Bool { return addr(atom.Bool(b)) }

// authRules writes an entity's authorization rules.
func authRules(rules []broker.AuthorizationRule) atom.AuthorizationRules {
	var out atom.AuthorizationRules
	for _, r := range rules {
		x := atom.AuthorizationRule{
			Type:         atom.SharedAccessAuthorizationRule,
			ClaimType:    "SharedAccessKey",
			ClaimValue:   "None",
			Rights:       r.Rights.Names(),
			KeyName:      r.KeyName,
			PrimaryKey:   r.PrimaryKey,
			SecondaryKey: r.SecondaryKey,
		}
		if !r.CreatedTime.IsZero() {
			x.CreatedTime = &atom.Time{Time: r.CreatedTime}
		}
		if !r.ModifiedTime.IsZero() {
			x.ModifiedTime = &atom.Time{Time: r.ModifiedTime}
		}
		out.Rules = append(out.Rules, x)
	}
	return out
}

func describeQueue(ent broker.Entity, host string) *atom.QueueDescription {
	s := ent.Settings
	return &atom.QueueDescription{
		LockDuration:                        duration(s.LockDuration),
		MaxSizeInMegabytes:                  integer(s.MaxSizeInMegabytes),
		RequiresDuplicateDetection:          boolean(s.RequiresDuplicateDetection),
		RequiresSession:                     boolean(s.RequiresSession),
		DefaultMessageTimeToLive:            duration(s.DefaultMessageTimeToLive),
		DeadLetteringOnMessageExpiration:    boolean(s.DeadLetteringOnMessageExpiration),
		DuplicateDetectionHistoryTimeWindow: duration(s.DuplicateDetectionHistoryTimeWindow),
		MaxDeliveryCount:                    integer(s.MaxDeliveryCount),
		EnableBatchedOperations:             boolean(!s.DisableBatchedOperations),
		SizeInBytes:                         atom.Int(ent.Counts.SizeBytes),
		MessageCount:                        messageCount(ent.Counts),
		AuthorizationRules:                  authRules(ent.AuthorizationRules),
		Status:                              addr(s.Status.String()),
		ForwardTo:                           forwardURI(host, s.ForwardTo, s.ForwardToURI),
		UserMetadata:                        optional(ent.UserMetadata),
		CreatedAt:                           atom.Time{Time: ent.CreatedAt},
		UpdatedAt:                           atom.Time{Time: ent.UpdatedAt},
		AccessedAt:                          atom.Time{Time: ent.AccessedAt},
		SupportOrdering:                     true,
		CountDetails:                        countDetails(ent.Counts),
		AutoDeleteOnIdle:                    duration(s.AutoDeleteOnIdle),
		EnablePartitioning:                  boolean(s.EnablePartitioning),
		EntityAvailabilityStatus:            "Available",
		ForwardDeadLetteredMessagesTo:       forwardURI(host, s.ForwardDeadLetteredMessagesTo, s.ForwardDeadLetteredMessagesToURI),
		MaxMessageSizeInKilobytes:           integer(s.MaxMessageSizeInKilobytes),
	}
}

// topicStats are what a topic's description reports about its
// subscriptions.
type topicStats struct {
	subscriptions int64
	size          int64
	// scheduled is the largest count of scheduled messages of any of its
	// subscriptions. The engine keeps a message scheduled to a topic as a
	// copy in each subscription that takes it (under the topic's sequence
	// number) instead of in the topic until it is due, as Service Bus does:
	// the largest count is the topic's own when every scheduled message
	// reaches some subscription that takes all of them.
	scheduled   int64
	sqlFilters  int64 // true and false filters count as SQL filters (1=1, 1=0), as in Service Bus
	corrFilters int64
}

// statsOf gathers topicStats for every topic in list, by lower-case path.
func statsOf(list []broker.Entity) map[string]*topicStats {
	stats := make(map[string]*topicStats)
	for _, ent := range list {
		if ent.Kind == broker.KindTopic {
			stats[strings.ToLower(ent.Path)] = &topicStats{}
		}
	}
	for _, ent := range list {
		topic, _, ok := broker.SplitSubscriptionPath(ent.Path)
		st := stats[strings.ToLower(topic)]
		if ent.Kind != broker.KindSubscription || !ok || st == nil {
			continue
		}
		st.subscriptions++
		st.size += ent.Counts.SizeBytes
		st.scheduled = max(st.scheduled, ent.Counts.Scheduled)
		for _, r := range ent.Rules {
			if r.Filter == nil {
				st.sqlFilters++
			} else {
				st.corrFilters++
			}
		}
	}
	return stats
}

// describeTopic describes a topic. The engine counts a topic's messages in
// its subscriptions; SizeInBytes is their sum, ScheduledMessageCount comes
// from them (see topicStats), and the other counts are zero.
func describeTopic(ent broker.Entity, st *topicStats) *atom.TopicDescription {
	if st == nil {
		st = &topicStats{}
	}
	s := ent.Settings
	return &atom.TopicDescription{
		DefaultMessageTimeToLive:            duration(s.DefaultMessageTimeToLive),
		MaxSizeInMegabytes:                  integer(s.MaxSizeInMegabytes),
		RequiresDuplicateDetection:          boolean(s.RequiresDuplicateDetection),
		DuplicateDetectionHistoryTimeWindow: duration(s.DuplicateDetectionHistoryTimeWindow),
		EnableBatchedOperations:             boolean(!s.DisableBatchedOperations),
		SizeInBytes:                         atom.Int(st.size),
		AuthorizationRules:                  authRules(ent.AuthorizationRules),
		Status:                              addr(s.Status.String()),
		UserMetadata:                        optional(ent.UserMetadata),
		CreatedAt:                           atom.Time{Time: ent.CreatedAt},
		UpdatedAt:                           atom.Time{Time: ent.UpdatedAt},
		AccessedAt:                          atom.Time{Time: ent.AccessedAt},
		SupportOrdering:                     boolean(!s.DisableSupportOrdering),
		CountDetails:                        atom.CountDetails{ScheduledMessageCount: clamp32(st.scheduled)},
		SubscriptionCount:                   clamp32(st.subscriptions),
		AutoDeleteOnIdle:                    duration(s.AutoDeleteOnIdle),
		EnablePartitioning:                  boolean(s.EnablePartitioning),
		EntityAvailabilityStatus:            "Available",
		MaxMessageSizeInKilobytes:           integer(s.MaxMessageSizeInKilobytes),
		SQLFilterCount:                      clamp32(st.sqlFilters),
		CorrelationFilterCount:              clamp32(st.corrFilters),
	}
}

func describeSubscription(ent broker.Entity, host string) *atom.SubscriptionDescription {
	s := ent.Settings
	return &atom.SubscriptionDescription{
		LockDuration:                              duration(s.LockDuration),
		RequiresSession:                           boolean(s.RequiresSession),
		DefaultMessageTimeToLive:                  duration(s.DefaultMessageTimeToLive),
		DeadLetteringOnMessageExpiration:          boolean(s.DeadLetteringOnMessageExpiration),
		DeadLetteringOnFilterEvaluationExceptions: boolean(!s.DisableFilterExceptionDeadLettering),
		MessageCount:                              messageCount(ent.Counts),
		MaxDeliveryCount:                          integer(s.MaxDeliveryCount),
		EnableBatchedOperations:                   boolean(!s.DisableBatchedOperations),
		Status:                                    addr(s.Status.String()),
		ForwardTo:                                 forwardURI(host, s.ForwardTo, s.ForwardToURI),
		UserMetadata:                              optional(ent.UserMetadata),
		CreatedAt:                                 atom.Time{Time: ent.CreatedAt},
		UpdatedAt:                                 atom.Time{Time: ent.UpdatedAt},
		AccessedAt:                                atom.Time{Time: ent.AccessedAt},
		CountDetails:                              countDetails(ent.Counts),
		AutoDeleteOnIdle:                          duration(s.AutoDeleteOnIdle),
		ForwardDeadLetteredMessagesTo:             forwardURI(host, s.ForwardDeadLetteredMessagesTo, s.ForwardDeadLetteredMessagesToURI),
		EntityAvailabilityStatus:                  "Available",
	}
}
