package sbamqp

// Link properties and filters of the Service Bus dialect.
const (
	// SessionFilter is the source filter of a receiver on a session: its
	// value names the session, or is null for the next free one.
	SessionFilter = "com.microsoft:session-filter"
	// SessionFilterCode is SessionFilter's descriptor code.
	SessionFilterCode uint64 = 0x0000013700000000 | 0x0C
	// PropLockedUntilUTC is the attach property with a session lock's
	// expiry.
	PropLockedUntilUTC = "com.microsoft:locked-until-utc"
	// PropTimeout is the attach property with how long a receiver that
	// asks for the next free session waits (milliseconds).
	PropTimeout = "com.microsoft:timeout"
	// PropMaxMessageBatchSize is the attach property with the most
	// messages a sender's batch may hold.
	PropMaxMessageBatchSize = "com.microsoft:max-message-batch-size"
	// PropVendorServerTimeout is the vendor spelling of PropServerTimeout
	// that some SDKs send on management requests.
	PropVendorServerTimeout = "com.microsoft:server-timeout"
)

// Descriptors of the .NET types the Service Bus SDKs put in property maps.
const (
	DescTimeSpan       = "com.microsoft:timespan"
	DescDateTimeOffset = "com.microsoft:datetime-offset"
	DescURI            = "com.microsoft:uri"
)

// DotNetEpochTicks is 1970-01-01 in .NET ticks (100 ns since 0001-01-01),
// the unit of PropLockedUntilUTC and of DescDateTimeOffset values.
const DotNetEpochTicks int64 = 621355968000000000
