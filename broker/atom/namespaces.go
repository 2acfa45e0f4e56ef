package atom

// XML namespaces of the management API.
const (
	// NSAtom is the namespace of feeds and entries.
	NSAtom = "http://www.w3.org/2005/Atom"
	// NSServiceBus is the namespace of the descriptions.
	NSServiceBus = "http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"
	// NSCounts is the namespace of the counts in CountDetails.
	NSCounts = "http://schemas.microsoft.com/netservices/2011/06/servicebus"
	// NSInstance is XML Schema instance, of the i:type and i:nil attributes.
	NSInstance = "http://www.w3.org/2001/XMLSchema-instance"
	// NSSchema is XML Schema, of the types of typed values.
	NSSchema = "http://www.w3.org/2001/XMLSchema"
)

// Prefixes Service Bus binds, and this package writes.
const (
	// PrefixInstance is bound to NSInstance on every description.
	PrefixInstance = "i"
	// PrefixCounts is bound to NSCounts on CountDetails.
	PrefixCounts = "d2p1"
	// PrefixSchema is bound to NSSchema on each typed value written by
	// NewValue.
	PrefixSchema = "d6p1"
)

// Content types of the management API's answers.
const (
	ContentTypeEntry = "application/atom+xml;type=entry;charset=utf-8"
	ContentTypeFeed  = "application/atom+xml;type=feed;charset=utf-8"
	ContentTypeError = "application/xml; charset=utf-8"
	// ContentTypeXML is the type attribute of an entry's content.
	ContentTypeXML = "application/xml"
)
