// Package atom is the vocabulary of the Service Bus management API: the
// ATOM/XML documents that Azure Service Bus and its emulator serve and
// take (feeds, entries, QueueDescription, TopicDescription,
// SubscriptionDescription, RuleDescription with its filters, actions and
// typed values, CountDetails, authorization rules, NamespaceInfo and the
// Error body) as Go types with their XML mapping, and the ISO 8601
// duration codec those documents use. The admin API server
// (broker/amqpserver/admin), the remote client (broker/remote) and the
// engine's Config.json loader share it, so that a setting is written once.
//
// # Writing
//
// Encoding a document writes it as Service Bus does: each description in
// Azure's element order, in the servicebus/connect namespace with the i
// prefix bound to XML Schema instance (i:type, i:nil), CountDetails with
// its counts under the d2p1 prefix (the JavaScript SDK's admin client reads
// them only so), typed values as i:type="d6p1:string" with d6p1 bound to
// XML Schema, times in RFC 3339 (ZeroTime for an unknown time) and
// durations in ISO 8601 (MaxDuration for "never"). Optional elements are
// pointers, written when set; the others are always written. Marshal adds
// the XML declaration; Error bodies have their own writer (Error.Marshal).
//
// # Reading
//
// Decoding matches elements by their local names, whatever namespaces and
// prefixes a client declares. A value that is not of its element's type
// (a boolean, an integer, a duration, a time) stops decoding with a
// *ValueError that names the element's path from the description, such as
// QueueDescription.LockDuration; a malformed duration is a *DurationError
// everywhere. What a value means (its range, its default when absent) is
// left to the reader.
//
// # Durations
//
// ParseDuration reads P[nY][nM][nW][nD][T[nH][nM][n[.f]S]] with .NET's
// calendar (a year is 365 days, a month 30); a duration longer than a
// time.Duration holds, .NET's TimeSpan.MaxValue (MaxDuration) included, is
// broker.MaxTimeToLive, "never". FormatDuration writes days, hours,
// minutes and seconds, as Service Bus does. No maintained Go library reads
// TimeSpan.MaxValue as "never": github.com/sosodev/duration v1.4.0 parses
// fractions right but turns it into a negative duration by overflow, and
// accepts "P", repeated and unordered units and negative durations.
package atom
