package admin

import (
	"encoding/xml"
	"time"
)

// XML namespaces of the management API.
const (
	nsAtom       = "http://www.w3.org/2005/Atom"
	nsServiceBus = "http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"
	nsCounts     = "http://schemas.microsoft.com/netservices/2011/06/servicebus"
	nsInstance   = "http://www.w3.org/2001/XMLSchema-instance"
	nsSchema     = "http://www.w3.org/2001/XMLSchema"
)

// Content types of the answers.
const (
	contentTypeEntry = "application/atom+xml;type=entry;charset=utf-8"
	contentTypeFeed  = "application/atom+xml;type=feed;charset=utf-8"
	contentTypeError = "application/xml; charset=utf-8"
	contentTypeXML   = "application/xml"
)

// zeroTime is how the management API writes a time it does not know; the
// SDKs read it as the zero time.
const zeroTime = "0001-01-01T00:00:00"

// formatTime writes an entity or rule time: RFC 3339 in UTC with as many
// fractional digits as needed, or zeroTime for the zero time.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return zeroTime
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// feedXML is an Atom feed of entries (a listing).
type feedXML struct {
	XMLName xml.Name   `xml:"http://www.w3.org/2005/Atom feed"`
	Title   textXML    `xml:"title"`
	ID      string     `xml:"id"`
	Updated string     `xml:"updated"`
	Link    linkXML    `xml:"link"`
	Entries []entryXML `xml:"entry"`
}

// entryXML is an Atom entry wrapping one description.
type entryXML struct {
	XMLName   xml.Name   `xml:"http://www.w3.org/2005/Atom entry"`
	ID        string     `xml:"id"`
	Title     textXML    `xml:"title"`
	Published string     `xml:"published"`
	Updated   string     `xml:"updated"`
	Author    authorXML  `xml:"author"`
	Link      linkXML    `xml:"link"`
	Content   contentXML `xml:"content"`
}

type textXML struct {
	Type string `xml:"type,attr"`
	Text string `xml:",chardata"`
}

type authorXML struct {
	Name string `xml:"name"`
}

type linkXML struct {
	Rel  string `xml:"rel,attr"`
	Href string `xml:"href,attr"`
}

// contentXML holds exactly one of the descriptions.
type contentXML struct {
	Queue     *queueXML
	Topic     *topicXML
	Sub       *subscriptionXML
	Rule      *ruleXML
	Namespace *namespaceXML
}

// MarshalXML writes <content type="application/xml"> and the description
// it holds.
func (c contentXML) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	start.Attr = []xml.Attr{{Name: xml.Name{Local: "type"}, Value: contentTypeXML}}
	if err := e.EncodeToken(start); err != nil {
		return err
	}
	var inner any
	switch {
	case c.Queue != nil:
		inner = c.Queue
	case c.Topic != nil:
		inner = c.Topic
	case c.Sub != nil:
		inner = c.Sub
	case c.Rule != nil:
		inner = c.Rule
	case c.Namespace != nil:
		inner = c.Namespace
	}
	if inner != nil {
		if err := e.Encode(inner); err != nil {
			return err
		}
	}
	return e.EncodeToken(start.End())
}

// countDetailsXML are the runtime counts, in their own namespace as Azure
// writes them.
type countDetailsXML struct {
	Active             int32 `xml:"http://schemas.microsoft.com/netservices/2011/06/servicebus ActiveMessageCount"`
	DeadLetter         int32 `xml:"http://schemas.microsoft.com/netservices/2011/06/servicebus DeadLetterMessageCount"`
	Scheduled          int32 `xml:"http://schemas.microsoft.com/netservices/2011/06/servicebus ScheduledMessageCount"`
	Transfer           int32 `xml:"http://schemas.microsoft.com/netservices/2011/06/servicebus TransferMessageCount"`
	TransferDeadLetter int32 `xml:"http://schemas.microsoft.com/netservices/2011/06/servicebus TransferDeadLetterMessageCount"`
}

// countNamespace is the namespace of the elements of CountDetails, and
// countPrefix the prefix Azure binds it to.
const (
	countNamespace = "http://schemas.microsoft.com/netservices/2011/06/servicebus"
	countPrefix    = "d2p1"
)

// MarshalXML writes the counts as Azure does: CountDetails declares one
// prefix for the namespace and each count element uses it
// (<d2p1:ActiveMessageCount>). The JavaScript SDK's admin client reads the
// counts only so: it takes the single xmlns:PREFIX attribute of
// CountDetails and looks up "PREFIX:ActiveMessageCount"; a default
// namespace on each element (encoding/xml's way) fails its parsing.
// Namespace-aware readers (the Go SDK) see the same elements either way.
func (c countDetailsXML) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	start.Name = xml.Name{Local: "CountDetails"}
	start.Attr = []xml.Attr{{Name: xml.Name{Local: "xmlns:" + countPrefix}, Value: countNamespace}}
	if err := e.EncodeToken(start); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		n    int32
	}{
		{"ActiveMessageCount", c.Active},
		{"DeadLetterMessageCount", c.DeadLetter},
		{"ScheduledMessageCount", c.Scheduled},
		{"TransferMessageCount", c.Transfer},
		{"TransferDeadLetterMessageCount", c.TransferDeadLetter},
	} {
		el := xml.StartElement{Name: xml.Name{Local: countPrefix + ":" + f.name}}
		if err := e.EncodeElement(f.n, el); err != nil {
			return err
		}
	}
	return e.EncodeToken(start.End())
}

// authorizationRulesXML is the list of entity-level SAS rules.
type authorizationRulesXML struct {
	Rules []authRuleXML `xml:"AuthorizationRule"`
}

// authRuleXML is a SharedAccessAuthorizationRule, its elements in Azure's
// order; the times only when known.
type authRuleXML struct {
	Type         string   `xml:"i:type,attr"`
	ClaimType    string   `xml:"ClaimType"`
	ClaimValue   string   `xml:"ClaimValue"`
	Rights       []string `xml:"Rights>AccessRights"`
	CreatedTime  string   `xml:"CreatedTime,omitempty"`
	ModifiedTime string   `xml:"ModifiedTime,omitempty"`
	KeyName      string   `xml:"KeyName"`
	PrimaryKey   string   `xml:"PrimaryKey"`
	SecondaryKey string   `xml:"SecondaryKey,omitempty"`
}

// queueXML is a QueueDescription, its elements in Azure's order.
type queueXML struct {
	XMLName                             xml.Name              `xml:"http://schemas.microsoft.com/netservices/2010/10/servicebus/connect QueueDescription"`
	XMLNSI                              string                `xml:"xmlns:i,attr"`
	LockDuration                        string                `xml:"LockDuration"`
	MaxSizeInMegabytes                  int64                 `xml:"MaxSizeInMegabytes"`
	RequiresDuplicateDetection          bool                  `xml:"RequiresDuplicateDetection"`
	RequiresSession                     bool                  `xml:"RequiresSession"`
	DefaultMessageTimeToLive            string                `xml:"DefaultMessageTimeToLive"`
	DeadLetteringOnMessageExpiration    bool                  `xml:"DeadLetteringOnMessageExpiration"`
	DuplicateDetectionHistoryTimeWindow string                `xml:"DuplicateDetectionHistoryTimeWindow"`
	MaxDeliveryCount                    int32                 `xml:"MaxDeliveryCount"`
	EnableBatchedOperations             bool                  `xml:"EnableBatchedOperations"`
	SizeInBytes                         int64                 `xml:"SizeInBytes"`
	MessageCount                        int64                 `xml:"MessageCount"`
	IsAnonymousAccessible               bool                  `xml:"IsAnonymousAccessible"`
	AuthorizationRules                  authorizationRulesXML `xml:"AuthorizationRules"`
	Status                              string                `xml:"Status"`
	ForwardTo                           string                `xml:"ForwardTo,omitempty"`
	UserMetadata                        string                `xml:"UserMetadata,omitempty"`
	CreatedAt                           string                `xml:"CreatedAt"`
	UpdatedAt                           string                `xml:"UpdatedAt"`
	AccessedAt                          string                `xml:"AccessedAt"`
	SupportOrdering                     bool                  `xml:"SupportOrdering"`
	CountDetails                        countDetailsXML       `xml:"CountDetails"`
	AutoDeleteOnIdle                    string                `xml:"AutoDeleteOnIdle"`
	EnablePartitioning                  bool                  `xml:"EnablePartitioning"`
	EntityAvailabilityStatus            string                `xml:"EntityAvailabilityStatus"`
	ForwardDeadLetteredMessagesTo       string                `xml:"ForwardDeadLetteredMessagesTo,omitempty"`
	EnableExpress                       bool                  `xml:"EnableExpress"`
	MaxMessageSizeInKilobytes           int64                 `xml:"MaxMessageSizeInKilobytes"`
}

// topicXML is a TopicDescription.
type topicXML struct {
	XMLName                             xml.Name              `xml:"http://schemas.microsoft.com/netservices/2010/10/servicebus/connect TopicDescription"`
	XMLNSI                              string                `xml:"xmlns:i,attr"`
	DefaultMessageTimeToLive            string                `xml:"DefaultMessageTimeToLive"`
	MaxSizeInMegabytes                  int64                 `xml:"MaxSizeInMegabytes"`
	RequiresDuplicateDetection          bool                  `xml:"RequiresDuplicateDetection"`
	DuplicateDetectionHistoryTimeWindow string                `xml:"DuplicateDetectionHistoryTimeWindow"`
	EnableBatchedOperations             bool                  `xml:"EnableBatchedOperations"`
	SizeInBytes                         int64                 `xml:"SizeInBytes"`
	FilteringMessagesBeforePublishing   bool                  `xml:"FilteringMessagesBeforePublishing"`
	IsAnonymousAccessible               bool                  `xml:"IsAnonymousAccessible"`
	AuthorizationRules                  authorizationRulesXML `xml:"AuthorizationRules"`
	Status                              string                `xml:"Status"`
	UserMetadata                        string                `xml:"UserMetadata,omitempty"`
	CreatedAt                           string                `xml:"CreatedAt"`
	UpdatedAt                           string                `xml:"UpdatedAt"`
	AccessedAt                          string                `xml:"AccessedAt"`
	SupportOrdering                     bool                  `xml:"SupportOrdering"`
	CountDetails                        countDetailsXML       `xml:"CountDetails"`
	SubscriptionCount                   int32                 `xml:"SubscriptionCount"`
	AutoDeleteOnIdle                    string                `xml:"AutoDeleteOnIdle"`
	EnablePartitioning                  bool                  `xml:"EnablePartitioning"`
	EntityAvailabilityStatus            string                `xml:"EntityAvailabilityStatus"`
	EnableSubscriptionPartitioning      bool                  `xml:"EnableSubscriptionPartitioning"`
	EnableExpress                       bool                  `xml:"EnableExpress"`
	MaxMessageSizeInKilobytes           int64                 `xml:"MaxMessageSizeInKilobytes"`
	SQLFilterCount                      int32                 `xml:"SqlFilterCount"`
	CorrelationFilterCount              int32                 `xml:"CorrelationFilterCount"`
}

// subscriptionXML is a SubscriptionDescription.
type subscriptionXML struct {
	XMLName                                   xml.Name        `xml:"http://schemas.microsoft.com/netservices/2010/10/servicebus/connect SubscriptionDescription"`
	XMLNSI                                    string          `xml:"xmlns:i,attr"`
	LockDuration                              string          `xml:"LockDuration"`
	RequiresSession                           bool            `xml:"RequiresSession"`
	DefaultMessageTimeToLive                  string          `xml:"DefaultMessageTimeToLive"`
	DeadLetteringOnMessageExpiration          bool            `xml:"DeadLetteringOnMessageExpiration"`
	DeadLetteringOnFilterEvaluationExceptions bool            `xml:"DeadLetteringOnFilterEvaluationExceptions"`
	MessageCount                              int64           `xml:"MessageCount"`
	MaxDeliveryCount                          int32           `xml:"MaxDeliveryCount"`
	EnableBatchedOperations                   bool            `xml:"EnableBatchedOperations"`
	Status                                    string          `xml:"Status"`
	ForwardTo                                 string          `xml:"ForwardTo,omitempty"`
	UserMetadata                              string          `xml:"UserMetadata,omitempty"`
	CreatedAt                                 string          `xml:"CreatedAt"`
	UpdatedAt                                 string          `xml:"UpdatedAt"`
	AccessedAt                                string          `xml:"AccessedAt"`
	CountDetails                              countDetailsXML `xml:"CountDetails"`
	AutoDeleteOnIdle                          string          `xml:"AutoDeleteOnIdle"`
	ForwardDeadLetteredMessagesTo             string          `xml:"ForwardDeadLetteredMessagesTo,omitempty"`
	EntityAvailabilityStatus                  string          `xml:"EntityAvailabilityStatus"`
}

// ruleXML is a RuleDescription.
type ruleXML struct {
	XMLName   xml.Name  `xml:"http://schemas.microsoft.com/netservices/2010/10/servicebus/connect RuleDescription"`
	XMLNSI    string    `xml:"xmlns:i,attr"`
	Filter    filterXML `xml:"Filter"`
	Action    actionXML `xml:"Action"`
	CreatedAt string    `xml:"CreatedAt"`
	Name      string    `xml:"Name"`
}

// filterXML is a rule's filter: TrueFilter (SqlExpression 1=1),
// FalseFilter (1=0), SqlFilter (with its Parameters) or CorrelationFilter.
type filterXML struct {
	Type               string         `xml:"i:type,attr"`
	SQLExpression      string         `xml:"SqlExpression,omitempty"`
	CompatibilityLevel int            `xml:"CompatibilityLevel,omitempty"`
	CorrelationID      *string        `xml:"CorrelationId,omitempty"`
	MessageID          *string        `xml:"MessageId,omitempty"`
	To                 *string        `xml:"To,omitempty"`
	ReplyTo            *string        `xml:"ReplyTo,omitempty"`
	Label              *string        `xml:"Label,omitempty"`
	SessionID          *string        `xml:"SessionId,omitempty"`
	ReplyToSessionID   *string        `xml:"ReplyToSessionId,omitempty"`
	ContentType        *string        `xml:"ContentType,omitempty"`
	Properties         *propertiesXML `xml:"Properties,omitempty"`
	Parameters         *propertiesXML `xml:"Parameters,omitempty"`
}

type propertiesXML struct {
	Items []keyValueXML `xml:"KeyValueOfstringanyType"`
}

type keyValueXML struct {
	Key   string   `xml:"Key"`
	Value valueXML `xml:"Value"`
}

// valueXML is a typed value: i:type="d6p1:string" with d6p1 bound to the
// XML Schema namespace, or i:nil="true" for a nil value.
type valueXML struct {
	Type   string `xml:"i:type,attr,omitempty"`
	Schema string `xml:"xmlns:d6p1,attr,omitempty"`
	Nil    string `xml:"i:nil,attr,omitempty"`
	Text   string `xml:",chardata"`
}

// actionXML is a rule's action: EmptyRuleAction or SqlRuleAction.
type actionXML struct {
	Type               string         `xml:"i:type,attr"`
	SQLExpression      string         `xml:"SqlExpression,omitempty"`
	Parameters         *propertiesXML `xml:"Parameters,omitempty"`
	CompatibilityLevel int            `xml:"CompatibilityLevel,omitempty"`
}

// namespaceXML is a NamespaceInfo.
type namespaceXML struct {
	XMLName       xml.Name `xml:"http://schemas.microsoft.com/netservices/2010/10/servicebus/connect NamespaceInfo"`
	XMLNSI        string   `xml:"xmlns:i,attr"`
	CreatedTime   string   `xml:"CreatedTime"`
	MessagingSKU  string   `xml:"MessagingSKU"`
	ModifiedTime  string   `xml:"ModifiedTime"`
	Name          string   `xml:"Name"`
	NamespaceType string   `xml:"NamespaceType"`
}

// errorXML is the body of every failure.
type errorXML struct {
	XMLName xml.Name `xml:"Error"`
	Code    int      `xml:"Code"`
	Detail  string   `xml:"Detail"`
}
