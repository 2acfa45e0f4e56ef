// Package sqlfilter implements the SQL dialect of Service Bus subscription
// rules: SQL filters (Microsoft's "SQL filter syntax") and SQL rule actions
// ("SQL action syntax"). An expression is parsed once, when its rule is
// created, into a Filter or an Action that is then evaluated against each
// message without parsing again.
//
// # Values and NULL
//
// A property that a message does not have, a system property that is not
// set (an empty string, a zero time) and the literal NULL are unknown.
// Arithmetic with an unknown operand is unknown; a comparison, IN or LIKE
// with an unknown operand is unknown; NOT, AND and OR follow SQL's
// three-valued logic; a filter whose value is unknown does not match. IS
// [NOT] NULL and EXISTS are never unknown.
//
// Numbers are int64 or float64: an integer literal is an int64 (one too large
// for it is refused), a literal with a decimal point or an exponent is a
// float64, and application properties of every Go integer and float type are
// read as one of them. Arithmetic on two integers is integer arithmetic
// (wrapping on overflow, as C# does unchecked; division and remainder by
// zero are unknown); with a float operand it is float arithmetic. + also
// joins two strings. Comparing values of incompatible types (a string with
// a number, a boolean with a string) is false, not an error, and so is an
// ordering comparison (<, >, ...) of booleans. Strings compare ordinally,
// case-sensitively; so does LIKE.
//
// # Names
//
// Keywords (AND, OR, NOT, IS, NULL, IN, LIKE, ESCAPE, EXISTS, TRUE, FALSE,
// SET, REMOVE) and function names are case-insensitive and reserved: a
// property with such a name must be written [bracketed] or "quoted". The
// scope sys. names a system property (MessageId, CorrelationId, To, ReplyTo,
// ReplyToSessionId, SessionId, Label or Subject, ContentType, PartitionKey,
// ViaPartitionKey, TimeToLive, ScheduledEnqueueTimeUtc, EnqueuedTimeUtc,
// ExpiresAtUtc, SequenceNumber, EnqueuedSequenceNumber, DeliveryCount, Size,
// DeadLetterSource; case-insensitive), and an unknown system property is
// refused when the expression is parsed. The scope user. or no scope names
// an application property: its name is looked up exactly first and then
// regardless of case, as Service Bus matches property names.
//
// # Parameters
//
// @name (an @ followed by letters, digits and _, as @p1) is a parameter: a
// value given with the expression rather than written into it, as Service
// Bus's SqlFilter.Parameters and SqlRuleAction.Parameters give them, keyed
// by the name with its @. ParseFilterWith and ParseActionWith take the
// values and bind them when the expression is parsed, so a parameter
// without a value is refused then (CodeInvalid, with its position), and an
// expression with parameters evaluates as fast as one with literals. A
// parameter is looked up exactly first and then regardless of case. A value
// is nil (NULL), a string, a bool, an integer or float (read as int64 or
// float64, as properties are), a time.Time, a time.Duration, a uuid.UUID or a
// []byte; a parameter may stand wherever a value may, and a string parameter
// also as a LIKE pattern or ESCAPE character. Parameters the expression does
// not use are allowed.
//
// # Limits
//
// An expression is at most MaxLength characters long and nests at most
// MaxDepth levels (parentheses, NOT, unary signs, operators); a longer or
// deeper one is refused with CodeInvalid, as is any malformed expression,
// with the 1-based character position of the problem.
package sqlfilter
