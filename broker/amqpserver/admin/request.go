package admin

import "encoding/xml"

// The request bodies, read without regard to XML namespaces (clients differ
// in how they declare them) and with every value as text, so that a bad
// value gets an error that names its element.

// entryIn is a PUT body: an Atom entry with one description.
type entryIn struct {
	XMLName xml.Name
	Content *struct {
		Queue *descriptionIn `xml:"QueueDescription"`
		Topic *descriptionIn `xml:"TopicDescription"`
		Sub   *descriptionIn `xml:"SubscriptionDescription"`
		Rule  *ruleIn        `xml:"RuleDescription"`
	} `xml:"content"`
}

// descriptionIn holds the elements of a QueueDescription, TopicDescription
// or SubscriptionDescription that peeklock reads.
type descriptionIn struct {
	LockDuration                        *string `xml:"LockDuration"`
	MaxSizeInMegabytes                  *string `xml:"MaxSizeInMegabytes"`
	RequiresDuplicateDetection          *string `xml:"RequiresDuplicateDetection"`
	RequiresSession                     *string `xml:"RequiresSession"`
	DefaultMessageTimeToLive            *string `xml:"DefaultMessageTimeToLive"`
	DeadLetteringOnMessageExpiration    *string `xml:"DeadLetteringOnMessageExpiration"`
	DuplicateDetectionHistoryTimeWindow *string `xml:"DuplicateDetectionHistoryTimeWindow"`
	MaxDeliveryCount                    *string `xml:"MaxDeliveryCount"`
	ForwardTo                           *string `xml:"ForwardTo"`
	ForwardDeadLetteredMessagesTo       *string `xml:"ForwardDeadLetteredMessagesTo"`
	MaxMessageSizeInKilobytes           *string `xml:"MaxMessageSizeInKilobytes"`
	Status                              *string `xml:"Status"`
	EnablePartitioning                  *string `xml:"EnablePartitioning"`
	AutoDeleteOnIdle                    *string `xml:"AutoDeleteOnIdle"`
	UserMetadata                        *string `xml:"UserMetadata"`
	EnableBatchedOperations             *string `xml:"EnableBatchedOperations"`
	DefaultRuleDescription              *ruleIn `xml:"DefaultRuleDescription"`
	AuthorizationRules                  *struct {
		Rules []authRuleIn `xml:"AuthorizationRule"`
	} `xml:"AuthorizationRules"`
}

// authRuleIn is an entity-level AuthorizationRule: a
// SharedAccessAuthorizationRule (the i:type attribute) with its rights,
// key name and keys, and optional times.
type authRuleIn struct {
	Attrs        []xml.Attr `xml:",any,attr"`
	Rights       []string   `xml:"Rights>AccessRights"`
	KeyName      *string    `xml:"KeyName"`
	PrimaryKey   *string    `xml:"PrimaryKey"`
	SecondaryKey *string    `xml:"SecondaryKey"`
	CreatedTime  *string    `xml:"CreatedTime"`
	ModifiedTime *string    `xml:"ModifiedTime"`
}

// ruleIn is a RuleDescription or a DefaultRuleDescription.
type ruleIn struct {
	Name   *string   `xml:"Name"`
	Filter *filterIn `xml:"Filter"`
	Action *actionIn `xml:"Action"`
}

type filterIn struct {
	Attrs            []xml.Attr `xml:",any,attr"`
	SQLExpression    *string    `xml:"SqlExpression"`
	Parameters       *paramsIn  `xml:"Parameters"`
	CorrelationID    *string    `xml:"CorrelationId"`
	MessageID        *string    `xml:"MessageId"`
	To               *string    `xml:"To"`
	ReplyTo          *string    `xml:"ReplyTo"`
	Label            *string    `xml:"Label"`
	SessionID        *string    `xml:"SessionId"`
	ReplyToSessionID *string    `xml:"ReplyToSessionId"`
	ContentType      *string    `xml:"ContentType"`
	Properties       *struct {
		Items []keyValueIn `xml:"KeyValueOfstringanyType"`
	} `xml:"Properties"`
}

type keyValueIn struct {
	Key   string `xml:"Key"`
	Value struct {
		Attrs []xml.Attr `xml:",any,attr"`
		Text  string     `xml:",chardata"`
	} `xml:"Value"`
}

type actionIn struct {
	Attrs         []xml.Attr `xml:",any,attr"`
	SQLExpression *string    `xml:"SqlExpression"`
	Parameters    *paramsIn  `xml:"Parameters"`
}

// paramsIn is the Parameters of a SQL filter or action: the values of the
// expression's @name, as KeyValueOfstringanyType elements like a correlation
// filter's Properties. Other is any other element, which is refused.
type paramsIn struct {
	Items []keyValueIn `xml:"KeyValueOfstringanyType"`
	Other []struct {
		XMLName xml.Name
	} `xml:",any"`
}

// typeAttr returns the local part of an element's i:type attribute
// ("d6p1:string" gives "string"), or "".
func typeAttr(attrs []xml.Attr) string {
	for _, a := range attrs {
		if a.Name.Local == "type" && a.Name.Space != "xmlns" {
			v := a.Value
			for i := len(v) - 1; i >= 0; i-- {
				if v[i] == ':' {
					return v[i+1:]
				}
			}
			return v
		}
	}
	return ""
}
