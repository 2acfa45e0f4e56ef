package atom

// Settings are the settings a description gives, whatever its kind: those
// a client may set and Service Bus reports back. A setting that the kind
// does not have (LockDuration of a topic, EnablePartitioning of a
// subscription...) is nil, as is one the document does not give.
type Settings struct {
	LockDuration                        *Duration
	MaxSizeInMegabytes                  *Int
	RequiresDuplicateDetection          *Bool
	RequiresSession                     *Bool
	DefaultMessageTimeToLive            *Duration
	DeadLetteringOnMessageExpiration    *Bool
	DuplicateDetectionHistoryTimeWindow *Duration
	MaxDeliveryCount                    *Int
	EnableBatchedOperations             *Bool
	Status                              *string
	ForwardTo                           *string
	UserMetadata                        *string
	AutoDeleteOnIdle                    *Duration
	EnablePartitioning                  *Bool
	ForwardDeadLetteredMessagesTo       *string
	MaxMessageSizeInKilobytes           *Int
	// SupportOrdering is a topic's; DeadLetteringOnFilterEvaluationExceptions
	// a subscription's.
	SupportOrdering                           *Bool
	DeadLetteringOnFilterEvaluationExceptions *Bool
}

// Settings returns the queue's settings.
func (q *QueueDescription) Settings() Settings {
	return Settings{
		LockDuration: q.LockDuration, MaxSizeInMegabytes: q.MaxSizeInMegabytes, RequiresDuplicateDetection: q.RequiresDuplicateDetection,
		RequiresSession: q.RequiresSession, DefaultMessageTimeToLive: q.DefaultMessageTimeToLive,
		DeadLetteringOnMessageExpiration: q.DeadLetteringOnMessageExpiration, DuplicateDetectionHistoryTimeWindow: q.DuplicateDetectionHistoryTimeWindow,
		MaxDeliveryCount: q.MaxDeliveryCount, EnableBatchedOperations: q.EnableBatchedOperations, Status: q.Status, ForwardTo: q.ForwardTo,
		UserMetadata: q.UserMetadata, AutoDeleteOnIdle: q.AutoDeleteOnIdle, EnablePartitioning: q.EnablePartitioning,
		ForwardDeadLetteredMessagesTo: q.ForwardDeadLetteredMessagesTo, MaxMessageSizeInKilobytes: q.MaxMessageSizeInKilobytes,
	}
}

// Settings returns the topic's settings.
func (t *TopicDescription) Settings() Settings {
	return Settings{
		DefaultMessageTimeToLive: t.DefaultMessageTimeToLive, MaxSizeInMegabytes: t.MaxSizeInMegabytes,
		RequiresDuplicateDetection: t.RequiresDuplicateDetection, DuplicateDetectionHistoryTimeWindow: t.DuplicateDetectionHistoryTimeWindow,
		EnableBatchedOperations: t.EnableBatchedOperations, Status: t.Status, UserMetadata: t.UserMetadata,
		AutoDeleteOnIdle: t.AutoDeleteOnIdle, EnablePartitioning: t.EnablePartitioning, MaxMessageSizeInKilobytes: t.MaxMessageSizeInKilobytes,
		SupportOrdering: t.SupportOrdering,
	}
}

// Settings returns the subscription's settings.
func (s *SubscriptionDescription) Settings() Settings {
	return Settings{
		LockDuration: s.LockDuration, RequiresSession: s.RequiresSession, DefaultMessageTimeToLive: s.DefaultMessageTimeToLive,
		DeadLetteringOnMessageExpiration: s.DeadLetteringOnMessageExpiration, MaxDeliveryCount: s.MaxDeliveryCount,
		EnableBatchedOperations: s.EnableBatchedOperations, Status: s.Status, ForwardTo: s.ForwardTo, UserMetadata: s.UserMetadata,
		AutoDeleteOnIdle: s.AutoDeleteOnIdle, ForwardDeadLetteredMessagesTo: s.ForwardDeadLetteredMessagesTo,
		DeadLetteringOnFilterEvaluationExceptions: s.DeadLetteringOnFilterEvaluationExceptions,
	}
}
