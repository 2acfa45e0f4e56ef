package sbamqp

// Message annotation keys that Service Bus sets on the messages it hands
// out (and accepts on the messages it is sent, for the partition keys and
// the scheduled time).
const (
	AnnotSequenceNumber        = "x-opt-sequence-number"
	AnnotEnqueueSequenceNumber = "x-opt-enqueue-sequence-number"
	AnnotEnqueuedTime          = "x-opt-enqueued-time"
	AnnotLockedUntil           = "x-opt-locked-until"
	AnnotScheduledEnqueueTime  = "x-opt-scheduled-enqueue-time"
	AnnotPartitionKey          = "x-opt-partition-key"
	AnnotViaPartitionKey       = "x-opt-via-partition-key"
	AnnotDeadLetterSource      = "x-opt-deadletter-source"
	AnnotMessageState          = "x-opt-message-state"
	// AnnotLockToken is the delivery annotation of the lock token, which
	// the SDKs read where the delivery tag carries none.
	AnnotLockToken = "x-opt-lock-token"
)
