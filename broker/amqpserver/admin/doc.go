// Package admin serves the Service Bus management API over HTTP in front of
// the embedded engine: the ATOM/XML API that Azure Service Bus and the
// Service Bus emulator (port 5300) answer, in the subset that the official
// SDKs' admin clients use, plus the emulator's GET /health.
//
// # Resources
//
//	GET    /health                                    {"status":"healthy",...}, no authorization
//	GET    /metrics                                   Prometheus metrics (Options.Metrics), no authorization
//	GET    /$namespaceinfo                            NamespaceInfo
//	GET    /$Resources/Queues?$skip=N&$top=M          feed of QueueDescription entries
//	GET    /$Resources/Topics?$skip=N&$top=M          feed of TopicDescription entries
//	GET    /<queue or topic>                          entry
//	PUT    /<queue or topic>                          create; with If-Match: update
//	DELETE /<queue or topic>
//	GET    /<topic>/Subscriptions?$skip=N&$top=M      feed of SubscriptionDescription entries
//	GET    /<topic>/Subscriptions/<sub>               entry
//	PUT    /<topic>/Subscriptions/<sub>               create; with If-Match: update
//	DELETE /<topic>/Subscriptions/<sub>
//	GET    /<topic>/Subscriptions/<sub>/Rules?...     feed of RuleDescription entries
//	GET    /<topic>/Subscriptions/<sub>/Rules/<rule>  entry
//	PUT    /<topic>/Subscriptions/<sub>/Rules/<rule>  create; with If-Match: update
//	DELETE /<topic>/Subscriptions/<sub>/Rules/<rule>
//
// Every request but /health and /metrics carries a shared access signature in the
// Authorization header (package sas) whose audience covers the resource;
// forwarding settings also need the ServiceBusSupplementaryAuthorization and
// ServiceBusDlqSupplementaryAuthorization headers unless that token covers
// the forwarding target too. The api-version query parameter is accepted
// and ignored.
//
// The documents, their XML mapping and the ISO 8601 durations in them are
// package atom's (broker/atom), which the remote client reads them with
// too; testdata/golden holds every kind of document this package writes,
// byte for byte.
//
// # Errors
//
// Failures answer as Azure does, with an XML body
// <Error><Code>404</Code><Detail>... TrackingId:..., SystemTracker:...,
// Timestamp:...</Detail></Error>: 401 for a missing, malformed, expired or
// foreign token; 404 for a missing entity or rule; 409 when creating one
// that exists; 400 for malformed XML, bad settings and what the engine does
// not support; 403 for a full entity; 503 when the engine is closed.
//
// # Times and user metadata
//
// Descriptions carry the engine's CreatedAt and UpdatedAt (stored) and
// AccessedAt (the last send or receive request, to the second, kept in
// memory: 0001-01-01T00:00:00, which the SDKs read as the zero time, until
// the first one after a start). A rule's CreatedAt is when it was added;
// the implicit $Default rule of a subscription that takes every message has
// the subscription's. UserMetadata is kept as sent, up to 1024 characters
// (longer: 400); a PUT without it clears it, as a PUT replaces the whole
// description.
//
// Creating, replacing or deleting a rule changes only the subscription's
// rules (engine.Engine.SetRules): messages locked in it stay locked and can
// be settled. Updating a description loses the entity's message locks, as
// any settings change does; session locks stay with their receivers.
//
// # Settings
//
// Status (Active, Disabled, SendDisabled, ReceiveDisabled), AutoDeleteOnIdle
// (at least five minutes), EnablePartitioning (queues and topics; it cannot
// change), EnableBatchedOperations and the entity's AuthorizationRules
// (SharedAccessAuthorizationRules) are kept and written back as given; the
// engine enforces the status and deletes entities idle for their
// AutoDeleteOnIdle. A partitioned queue or topic reports 16 times the
// MaxSizeInMegabytes given, as Service Bus's Standard tier does (16
// partitions); a value sent back as read (a multiple of 16, at least 16
// GB) is taken as the total. ForwardTo and ForwardDeadLetteredMessagesTo
// given as absolute URIs are written back as given (scheme and host in
// lower case); given as entity names, as sb://<host>/<name>. A topic's
// ScheduledMessageCount is the largest of its subscriptions' (the engine
// keeps a topic's scheduled messages in its subscriptions).
// MaxMessageSizeInKilobytes of a queue or topic is 256 (the Standard
// tier's, the default) or 1024 to 102400 (the Premium tier's); another
// size is refused in Service Bus's words, unless an update sends back the
// size the entity has (one the configuration file gave).
//
// # What is not kept
//
// Subscription rules hold a TrueFilter, FalseFilter, SqlFilter or
// CorrelationFilter and an optional SqlRuleAction (EmptyRuleAction when
// none). A queue's SupportOrdering is always true, EnableExpress false. A
// topic's SupportOrdering and a subscription's
// DeadLetteringOnFilterEvaluationExceptions (both true unless given) are
// kept and reported, without effect: the engine delivers in order, and none
// of its filters raises an exception.
//
// # SQL parameters
//
// A SqlFilter and a SqlRuleAction may carry Parameters, the values of the
// expression's @name: KeyValueOfstringanyType elements keyed by the name
// with its @, each Value of an XML Schema type (string, boolean, int, long,
// short, byte, the unsigned ones, double, float, decimal, dateTime,
// duration, base64Binary, guid; atom.Value.Decode) or i:nil="true", as the
// SDKs send them. They are kept with the rule and
// written back the same way on GET (integers that fit as int, the type the
// Go SDK reads; dateTime in UTC). A parameter the expression uses but
// Parameters lack refuses the rule with 400 and its position; parameters it
// does not use are kept. Parameters on any other filter are refused.
//
// # Serving
//
// NewServer puts the handler behind an HTTP server with limits
// (ServerOptions): timeouts for headers, whole requests, responses and idle
// keep-alive connections, a header size limit, and a connection cap beyond
// which the connection idle longest is closed. Failed requests are logged
// with client-supplied text shortened and escaped, within a budget of lines.
package admin
