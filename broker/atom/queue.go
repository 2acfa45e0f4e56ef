package atom

import "encoding/xml"

// QueueDescription describes a queue, its elements in Azure's order.
// Pointers are the settings a client may give (nil: not given); the other
// elements are what Service Bus reports and are always written.
type QueueDescription struct {
	LockDuration                        *Duration          `xml:"LockDuration"`
	MaxSizeInMegabytes                  *Int               `xml:"MaxSizeInMegabytes"`
	RequiresDuplicateDetection          *Bool              `xml:"RequiresDuplicateDetection"`
	RequiresSession                     *Bool              `xml:"RequiresSession"`
	DefaultMessageTimeToLive            *Duration          `xml:"DefaultMessageTimeToLive"`
	DeadLetteringOnMessageExpiration    *Bool              `xml:"DeadLetteringOnMessageExpiration"`
	DuplicateDetectionHistoryTimeWindow *Duration          `xml:"DuplicateDetectionHistoryTimeWindow"`
	MaxDeliveryCount                    *Int               `xml:"MaxDeliveryCount"`
	EnableBatchedOperations             *Bool              `xml:"EnableBatchedOperations"`
	SizeInBytes                         Int                `xml:"SizeInBytes"`
	MessageCount                        Int                `xml:"MessageCount"`
	IsAnonymousAccessible               Bool               `xml:"IsAnonymousAccessible"`
	AuthorizationRules                  AuthorizationRules `xml:"AuthorizationRules"`
	Status                              *string            `xml:"Status"`
	ForwardTo                           *string            `xml:"ForwardTo"`
	UserMetadata                        *string            `xml:"UserMetadata"`
	CreatedAt                           Time               `xml:"CreatedAt"`
	UpdatedAt                           Time               `xml:"UpdatedAt"`
	AccessedAt                          Time               `xml:"AccessedAt"`
	SupportOrdering                     Bool               `xml:"SupportOrdering"`
	CountDetails                        CountDetails       `xml:"CountDetails"`
	AutoDeleteOnIdle                    *Duration          `xml:"AutoDeleteOnIdle"`
	EnablePartitioning                  *Bool              `xml:"EnablePartitioning"`
	EntityAvailabilityStatus            string             `xml:"EntityAvailabilityStatus"`
	ForwardDeadLetteredMessagesTo       *string            `xml:"ForwardDeadLetteredMessagesTo"`
	EnableExpress                       Bool               `xml:"EnableExpress"`
	MaxMessageSizeInKilobytes           *Int               `xml:"MaxMessageSizeInKilobytes"`
}

// MarshalXML writes the description in the servicebus/connect namespace.
func (q QueueDescription) MarshalXML(e *xml.Encoder, _ xml.StartElement) error {
	type plain QueueDescription
	return e.EncodeElement(plain(q), descriptionStart("QueueDescription"))
}

// UnmarshalXML reads the description; a malformed value is a *ValueError
// that names QueueDescription.<element>.
func (q *QueueDescription) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	type plain QueueDescription
	return within(start.Name.Local, d.DecodeElement((*plain)(q), &start))
}
