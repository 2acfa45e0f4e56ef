package atom

import "encoding/xml"

// Filter and action types (the i:type of a Filter or Action).
const (
	TrueFilter        = "TrueFilter"
	FalseFilter       = "FalseFilter"
	SQLFilter         = "SqlFilter"
	CorrelationFilter = "CorrelationFilter"
	EmptyRuleAction   = "EmptyRuleAction"
	SQLRuleAction     = "SqlRuleAction"
)

// CompatibilityLevel is the level Service Bus writes on SQL filters and
// actions.
const CompatibilityLevel = 20

// RuleDescription describes a subscription rule: a filter that selects
// messages and an optional action that changes them, in Azure's order. As
// a SubscriptionDescription's DefaultRuleDescription it has only Filter,
// Action and Name.
type RuleDescription struct {
	Filter    *Filter `xml:"Filter"`
	Action    *Action `xml:"Action"`
	CreatedAt *Time   `xml:"CreatedAt"`
	Name      *string `xml:"Name"`
}

// MarshalXML writes a RuleDescription in the servicebus/connect namespace;
// as a DefaultRuleDescription, it inherits the subscription's.
func (r RuleDescription) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	type plain RuleDescription
	if start.Name.Local == "" || start.Name.Local == "RuleDescription" {
		start = descriptionStart("RuleDescription")
	} else {
		start = xml.StartElement{Name: xml.Name{Local: start.Name.Local}}
	}
	return e.EncodeElement(plain(r), start)
}

// UnmarshalXML reads the description; a malformed value is a *ValueError
// that names RuleDescription.<element>.
func (r *RuleDescription) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	type plain RuleDescription
	return within(start.Name.Local, d.DecodeElement((*plain)(r), &start))
}

// Filter is a rule's filter, by its Type: TrueFilter and FalseFilter (with
// SqlExpression 1=1 and 1=0), SqlFilter (SqlExpression and Parameters) or
// CorrelationFilter (the system properties and Properties), its elements
// in Azure's order.
type Filter struct {
	Type               InstanceType `xml:"type,attr"`
	SQLExpression      *string      `xml:"SqlExpression"`
	CompatibilityLevel Int          `xml:"CompatibilityLevel,omitempty"`
	CorrelationID      *string      `xml:"CorrelationId"`
	MessageID          *string      `xml:"MessageId"`
	To                 *string      `xml:"To"`
	ReplyTo            *string      `xml:"ReplyTo"`
	Label              *string      `xml:"Label"`
	SessionID          *string      `xml:"SessionId"`
	ReplyToSessionID   *string      `xml:"ReplyToSessionId"`
	ContentType        *string      `xml:"ContentType"`
	Properties         *KeyValues   `xml:"Properties"`
	Parameters         *KeyValues   `xml:"Parameters"`
}

// UnmarshalXML reads the filter; a malformed value is a *ValueError that
// names Filter.<element>.
func (f *Filter) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	type plain Filter
	return within(start.Name.Local, d.DecodeElement((*plain)(f), &start))
}

// Action is a rule's action, by its Type: EmptyRuleAction, or
// SqlRuleAction with SqlExpression and Parameters.
type Action struct {
	Type               InstanceType `xml:"type,attr"`
	SQLExpression      *string      `xml:"SqlExpression"`
	Parameters         *KeyValues   `xml:"Parameters"`
	CompatibilityLevel Int          `xml:"CompatibilityLevel,omitempty"`
}

// UnmarshalXML reads the action; a malformed value is a *ValueError that
// names Action.<element>.
func (a *Action) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	type plain Action
	return within(start.Name.Local, d.DecodeElement((*plain)(a), &start))
}
