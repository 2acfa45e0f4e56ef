package sbamqp

// Node addresses. An entity's management node is its address followed by
// ManagementSuffix.
const (
	CBSAddress       = "$cbs"
	ManagementSuffix = "/$management"
)

// Operations of the $management node (the "operation" application
// property of a request).
const (
	OpRenewLock          = "com.microsoft:renew-lock"
	OpPeekMessage        = "com.microsoft:peek-message"
	OpReceiveBySequence  = "com.microsoft:receive-by-sequence-number"
	OpUpdateDisposition  = "com.microsoft:update-disposition"
	OpScheduleMessage    = "com.microsoft:schedule-message"
	OpCancelScheduled    = "com.microsoft:cancel-scheduled-message"
	OpRenewSessionLock   = "com.microsoft:renew-session-lock"
	OpGetSessionState    = "com.microsoft:get-session-state"
	OpSetSessionState    = "com.microsoft:set-session-state"
	OpGetMessageSessions = "com.microsoft:get-message-sessions"
	OpAddRule            = "com.microsoft:add-rule"
	OpRemoveRule         = "com.microsoft:remove-rule"
	OpEnumerateRules     = "com.microsoft:enumerate-rules"
)

// OpPutToken is the one operation of the $cbs node: it hands the node a
// token for an audience.
const OpPutToken = "put-token"

// Token types of a put-token request (its "type" application property).
const (
	TokenTypeSAS = "servicebus.windows.net:sastoken"
	TokenTypeJWT = "jwt"
)

// Application properties of requests. A $cbs put-token request names its
// token with PropType, PropName (the audience) and PropExpiration.
const (
	PropOperation          = "operation"
	PropAssociatedLinkName = "associated-link-name"
	PropServerTimeout      = "server-timeout"
	PropType               = "type"
	PropName               = "name"
	PropExpiration         = "expiration"
)

// Application properties of responses. $cbs answers with the AMQP
// management names (PropCBSStatusCode...), $management with the names
// Service Bus uses there.
const (
	PropStatusCode           = "statusCode"
	PropStatusDescription    = "statusDescription"
	PropCBSStatusCode        = "status-code"
	PropCBSStatusDescription = "status-description"
	PropErrorCondition       = "errorCondition"
)

// Keys of the map bodies of $management requests and responses.
const (
	KeyLockTokens            = "lock-tokens"
	KeyLockToken             = "lock-token"
	KeySequenceNumbers       = "sequence-numbers"
	KeyFromSequenceNumber    = "from-sequence-number"
	KeyMessageCount          = "message-count"
	KeyMessages              = "messages"
	KeyMessage               = "message"
	KeyMessageID             = "message-id"
	KeySessionID             = "session-id"
	KeySessionState          = "session-state"
	KeyPartitionKey          = "partition-key"
	KeyViaPartitionKey       = "via-partition-key"
	KeyExpirations           = "expirations"
	KeyExpiration            = "expiration"
	KeyReceiverSettleMode    = "receiver-settle-mode"
	KeyDispositionStatus     = "disposition-status"
	KeyDeadLetterReason      = "deadletter-reason"
	KeyDeadLetterDescription = "deadletter-description"
	KeyPropertiesToModify    = "properties-to-modify"
)

// Values of KeyDispositionStatus in an update-disposition request
// ("defered" is the wire spelling).
const (
	DispositionCompleted = "completed"
	DispositionAbandoned = "abandoned"
	DispositionSuspended = "suspended"
	DispositionDeferred  = "defered"
)
