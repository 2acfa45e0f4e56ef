package admin

import (
	"math"
	"strings"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/engine"
)

// never is how the management API writes an unlimited duration.
var never = engine.FormatDuration(broker.MaxTimeToLive)

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

// forwardURI writes a forwarding target as the absolute URI Service Bus
// reports, or "" for none.
func forwardURI(host, path string) string {
	if path == "" {
		return ""
	}
	return "sb://" + host + "/" + path
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
		EnableBatchedOperations:             true,
		SizeInBytes:                         ent.Counts.SizeBytes,
		MessageCount:                        messageCount(ent.Counts),
		Status:                              "Active",
		ForwardTo:                           forwardURI(host, s.ForwardTo),
		UserMetadata:                        ent.UserMetadata,
		CreatedAt:                           formatTime(ent.CreatedAt),
		UpdatedAt:                           formatTime(ent.UpdatedAt),
		AccessedAt:                          formatTime(ent.AccessedAt),
		SupportOrdering:                     true,
		CountDetails:                        countDetails(ent.Counts),
		AutoDeleteOnIdle:                    never,
		EntityAvailabilityStatus:            "Available",
		ForwardDeadLetteredMessagesTo:       forwardURI(host, s.ForwardDeadLetteredMessagesTo),
		MaxMessageSizeInKilobytes:           s.MaxMessageSizeInKilobytes,
	}
}

// topicStats are what a topic's description reports about its
// subscriptions.
type topicStats struct {
	subscriptions int64
	size          int64
	sqlFilters    int64 // true and false filters count as SQL filters (1=1, 1=0), as in Service Bus
	corrFilters   int64
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
// its subscriptions; SizeInBytes is their sum, and the counts are zero.
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
		EnableBatchedOperations:             true,
		SizeInBytes:                         st.size,
		FilteringMessagesBeforePublishing:   false,
		Status:                              "Active",
		UserMetadata:                        ent.UserMetadata,
		CreatedAt:                           formatTime(ent.CreatedAt),
		UpdatedAt:                           formatTime(ent.UpdatedAt),
		AccessedAt:                          formatTime(ent.AccessedAt),
		SupportOrdering:                     true,
		SubscriptionCount:                   clamp32(st.subscriptions),
		AutoDeleteOnIdle:                    never,
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
		EnableBatchedOperations:          true,
		Status:                           "Active",
		ForwardTo:                        forwardURI(host, s.ForwardTo),
		UserMetadata:                     ent.UserMetadata,
		CreatedAt:                        formatTime(ent.CreatedAt),
		UpdatedAt:                        formatTime(ent.UpdatedAt),
		AccessedAt:                       formatTime(ent.AccessedAt),
		CountDetails:                     countDetails(ent.Counts),
		AutoDeleteOnIdle:                 never,
		ForwardDeadLetteredMessagesTo:    forwardURI(host, s.ForwardDeadLetteredMessagesTo),
		EntityAvailabilityStatus:         "Available",
	}
}
