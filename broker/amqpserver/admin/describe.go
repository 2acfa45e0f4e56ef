package admin

import (
	"math"
	"strings"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// clamp32 fits a count into the int32 the SDKs read.
func clamp32(n int64) int32 {
	if n > math.MaxInt32 {
		return math.MaxInt32
	}
	if n < 0 {
		return 0
	}
	return int32(n)
}

// countDetails maps the engine's counts to Service Bus's: ActiveMessageCount
// is available plus locked messages (broker.Counts); deferred messages count
// in MessageCount only.
func countDetails(c broker.Counts) countDetailsXML {
	return countDetailsXML{
		Active:             clamp32(c.Active + c.Locked),
		DeadLetter:         clamp32(c.DeadLettered),
		Scheduled:          clamp32(c.Scheduled),
		Transfer:           clamp32(c.Transfer),
		TransferDeadLetter: clamp32(c.TransferDeadLettered),
	}
}

// messageCount is Service Bus's MessageCount: every message of the entity,
// its dead-letter and transfer dead-letter sub-queues included.
func messageCount(c broker.Counts) int64 {
	return c.Active + c.Locked + c.Deferred + c.Scheduled + c.DeadLettered + c.Transfer + c.TransferDeadLettered
}

// forwardURI writes a forwarding target as Service Bus reports it: the
// absolute URI the client gave (uri), or one built from the entity path
// (sb://host/path); "" for none.
func forwardURI(host, path, uri string) string {
	switch {
	case path == "":
		return ""
	case uri != "":
		return uri
	}
	return "sb://" + host + "/" + path
}

// authRules writes an entity's authorization rules.
func authRules(rules []broker.AuthorizationRule) authorizationRulesXML {
	var out authorizationRulesXML
	for _, r := range rules {
		x := authRuleXML{
			Type:         "SharedAccessAuthorizationRule",
			ClaimType:    "SharedAccessKey",
			ClaimValue:   "None",
			Rights:       r.Rights.Names(),
			KeyName:      r.KeyName,
			PrimaryKey:   r.PrimaryKey,
			SecondaryKey: r.SecondaryKey,
		}
		if !r.CreatedTime.IsZero() {
			x.CreatedTime = formatTime(r.CreatedTime)
		}
		if !r.ModifiedTime.IsZero() {
			x.ModifiedTime = formatTime(r.ModifiedTime)
		}
		out.Rules = append(out.Rules, x)
	}
	return out
}

func describeQueue(ent broker.Entity, host string) *queueXML {
	s := ent.Settings
	return &queueXML{
		XMLNSI:                              nsInstance,
		LockDuration:                        engine.FormatDuration(s.LockDuration),
		MaxSizeInMegabytes:                  s.MaxSizeInMegabytes,
		RequiresDuplicateDetection:          s.RequiresDuplicateDetection,
		RequiresSession:                     s.RequiresSession,
		DefaultMessageTimeToLive:            engine.FormatDuration(s.DefaultMessageTimeToLive),
		DeadLetteringOnMessageExpiration:    s.DeadLetteringOnMessageExpiration,
		DuplicateDetectionHistoryTimeWindow: engine.FormatDuration(s.DuplicateDetectionHistoryTimeWindow),
		MaxDeliveryCount:                    s.MaxDeliveryCount,
		EnableBatchedOperations:             !s.DisableBatchedOperations,
		SizeInBytes:                         ent.Counts.SizeBytes,
		MessageCount:                        messageCount(ent.Counts),
		AuthorizationRules:                  authRules(ent.AuthorizationRules),
		Status:                              s.Status.String(),
		ForwardTo:                           forwardURI(host, s.ForwardTo, s.ForwardToURI),
		UserMetadata:                        ent.UserMetadata,
		CreatedAt:                           formatTime(ent.CreatedAt),
		UpdatedAt:                           formatTime(ent.UpdatedAt),
		AccessedAt:                          formatTime(ent.AccessedAt),
		SupportOrdering:                     true,
		CountDetails:                        countDetails(ent.Counts),
		AutoDeleteOnIdle:                    engine.FormatDuration(s.AutoDeleteOnIdle),
		EnablePartitioning:                  s.EnablePartitioning,
		EntityAvailabilityStatus:            "Available",
		ForwardDeadLetteredMessagesTo:       forwardURI(host, s.ForwardDeadLetteredMessagesTo, s.ForwardDeadLetteredMessagesToURI),
		MaxMessageSizeInKilobytes:           s.MaxMessageSizeInKilobytes,
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
func describeTopic(ent broker.Entity, st *topicStats) *topicXML {
	if st == nil {
		st = &topicStats{}
	}
	s := ent.Settings
	return &topicXML{
		XMLNSI:                              nsInstance,
		DefaultMessageTimeToLive:            engine.FormatDuration(s.DefaultMessageTimeToLive),
		MaxSizeInMegabytes:                  s.MaxSizeInMegabytes,
		RequiresDuplicateDetection:          s.RequiresDuplicateDetection,
		DuplicateDetectionHistoryTimeWindow: engine.FormatDuration(s.DuplicateDetectionHistoryTimeWindow),
		EnableBatchedOperations:             !s.DisableBatchedOperations,
		SizeInBytes:                         st.size,
		FilteringMessagesBeforePublishing:   false,
		AuthorizationRules:                  authRules(ent.AuthorizationRules),
		Status:                              s.Status.String(),
		UserMetadata:                        ent.UserMetadata,
		CreatedAt:                           formatTime(ent.CreatedAt),
		UpdatedAt:                           formatTime(ent.UpdatedAt),
		AccessedAt:                          formatTime(ent.AccessedAt),
		SupportOrdering:                     true,
		CountDetails:                        countDetailsXML{Scheduled: clamp32(st.scheduled)},
		SubscriptionCount:                   clamp32(st.subscriptions),
		AutoDeleteOnIdle:                    engine.FormatDuration(s.AutoDeleteOnIdle),
		EnablePartitioning:                  s.EnablePartitioning,
		EntityAvailabilityStatus:            "Available",
		MaxMessageSizeInKilobytes:           s.MaxMessageSizeInKilobytes,
		SQLFilterCount:                      clamp32(st.sqlFilters),
		CorrelationFilterCount:              clamp32(st.corrFilters),
	}
}

func describeSubscription(ent broker.Entity, host string) *subscriptionXML {
	s := ent.Settings
	return &subscriptionXML{
		XMLNSI:                           nsInstance,
		LockDuration:                     engine.FormatDuration(s.LockDuration),
		RequiresSession:                  s.RequiresSession,
		DefaultMessageTimeToLive:         engine.FormatDuration(s.DefaultMessageTimeToLive),
		DeadLetteringOnMessageExpiration: s.DeadLetteringOnMessageExpiration,
		MessageCount:                     messageCount(ent.Counts),
		MaxDeliveryCount:                 s.MaxDeliveryCount,
		EnableBatchedOperations:          !s.DisableBatchedOperations,
		Status:                           s.Status.String(),
		ForwardTo:                        forwardURI(host, s.ForwardTo, s.ForwardToURI),
		UserMetadata:                     ent.UserMetadata,
		CreatedAt:                        formatTime(ent.CreatedAt),
		UpdatedAt:                        formatTime(ent.UpdatedAt),
		AccessedAt:                       formatTime(ent.AccessedAt),
		CountDetails:                     countDetails(ent.Counts),
		AutoDeleteOnIdle:                 engine.FormatDuration(s.AutoDeleteOnIdle),
		ForwardDeadLetteredMessagesTo:    forwardURI(host, s.ForwardDeadLetteredMessagesTo, s.ForwardDeadLetteredMessagesToURI),
		EntityAvailabilityStatus:         "Available",
	}
}
