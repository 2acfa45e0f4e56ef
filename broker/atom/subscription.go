package atom

import "encoding/xml"

// SubscriptionDescription describes a subscription, its elements in
// Azure's order. Pointers are the settings a client may give (nil: not
// given); the other elements are what Service Bus reports and are always
// written. DefaultRuleDescription is the rule a client creates the
// subscription with; Service Bus does not report it.
type SubscriptionDescription struct {
	LockDuration                              *Duration        `xml:"LockDuration"`
	RequiresSession                           *Bool            `xml:"RequiresSession"`
	DefaultMessageTimeToLive                  *Duration        `xml:"DefaultMessageTimeToLive"`
	DeadLetteringOnMessageExpiration          *Bool            `xml:"DeadLetteringOnMessageExpiration"`
	DeadLetteringOnFilterEvaluationExceptions *Bool            `xml:"DeadLetteringOnFilterEvaluationExceptions"`
	DefaultRuleDescription                    *RuleDescription `xml:"DefaultRuleDescription"`
	MessageCount                              Int              `xml:"MessageCount"`
	MaxDeliveryCount                          *Int             `xml:"MaxDeliveryCount"`
	EnableBatchedOperations                   *Bool            `xml:"EnableBatchedOperations"`
	Status                                    *string          `xml:"Status"`
	ForwardTo                                 *string          `xml:"ForwardTo"`
	UserMetadata                              *string          `xml:"UserMetadata"`
	CreatedAt                                 Time             `xml:"CreatedAt"`
	UpdatedAt                                 Time             `xml:"UpdatedAt"`
	AccessedAt                                Time             `xml:"AccessedAt"`
	CountDetails                              CountDetails     `xml:"CountDetails"`
	AutoDeleteOnIdle                          *Duration        `xml:"AutoDeleteOnIdle"`
	ForwardDeadLetteredMessagesTo             *string          `xml:"ForwardDeadLetteredMessagesTo"`
	EntityAvailabilityStatus                  string           `xml:"EntityAvailabilityStatus"`
}

// MarshalXML writes the description in the servicebus/connect namespace.
func (s SubscriptionDescription) MarshalXML(e *xml.Encoder, _ xml.StartElement) error {
	type plain SubscriptionDescription
	return e.EncodeElement(plain(s), descriptionStart("SubscriptionDescription"))
}

// UnmarshalXML reads the description; a malformed value is a *ValueError
// that names SubscriptionDescription.<element>.
func (s *SubscriptionDescription) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	type plain SubscriptionDescription
	return within(start.Name.Local, d.DecodeElement((*plain)(s), &start))
}
