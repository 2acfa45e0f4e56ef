package atom

import "encoding/xml"

// TopicDescription describes a topic, its elements in Azure's order.
// Pointers are the settings a client may give (nil: not given); the other
// elements are what Service Bus reports and are always written.
type TopicDescription struct {
	DefaultMessageTimeToLive            *Duration          `xml:"DefaultMessageTimeToLive"`
	MaxSizeInMegabytes                  *Int               `xml:"MaxSizeInMegabytes"`
	RequiresDuplicateDetection          *Bool              `xml:"RequiresDuplicateDetection"`
	DuplicateDetectionHistoryTimeWindow *Duration          `xml:"DuplicateDetectionHistoryTimeWindow"`
	EnableBatchedOperations             *Bool              `xml:"EnableBatchedOperations"`
	SizeInBytes                         Int                `xml:"SizeInBytes"`
	FilteringMessagesBeforePublishing   Bool               `xml:"FilteringMessagesBeforePublishing"`
	IsAnonymousAccessible               Bool               `xml:"IsAnonymousAccessible"`
	AuthorizationRules                  AuthorizationRules `xml:"AuthorizationRules"`
	Status                              *string            `xml:"Status"`
	UserMetadata                        *string            `xml:"UserMetadata"`
	CreatedAt                           Time               `xml:"CreatedAt"`
	UpdatedAt                           Time               `xml:"UpdatedAt"`
	AccessedAt                          Time               `xml:"AccessedAt"`
	SupportOrdering                     *Bool              `xml:"SupportOrdering"`
	CountDetails                        CountDetails       `xml:"CountDetails"`
	SubscriptionCount                   Int                `xml:"SubscriptionCount"`
	AutoDeleteOnIdle                    *Duration          `xml:"AutoDeleteOnIdle"`
	EnablePartitioning                  *Bool              `xml:"EnablePartitioning"`
	EntityAvailabilityStatus            string             `xml:"EntityAvailabilityStatus"`
	EnableSubscriptionPartitioning      Bool               `xml:"EnableSubscriptionPartitioning"`
	EnableExpress                       Bool               `xml:"EnableExpress"`
	MaxMessageSizeInKilobytes           *Int               `xml:"MaxMessageSizeInKilobytes"`
	SQLFilterCount                      Int                `xml:"SqlFilterCount"`
	CorrelationFilterCount              Int                `xml:"CorrelationFilterCount"`
}

// MarshalXML writes the description in the servicebus/connect namespace.
func (t TopicDescription) MarshalXML(e *xml.Encoder, _ xml.StartElement) error {
	type plain TopicDescription
	return e.EncodeElement(plain(t), descriptionStart("TopicDescription"))
}

// UnmarshalXML reads the description; a malformed value is a *ValueError
// that names TopicDescription.<element>.
func (t *TopicDescription) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	type plain TopicDescription
	return within(start.Name.Local, d.DecodeElement((*plain)(t), &start))
}
