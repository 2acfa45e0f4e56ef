package atom

import (
	"bytes"
	"encoding/xml"
)

// Feed is an Atom feed: a listing of entries ($Resources/Queues, a topic's
// Subscriptions, a subscription's Rules).
type Feed struct {
	// XMLName is the element as read; Feed is always written as an Atom
	// feed.
	XMLName xml.Name
	Title   Text    `xml:"title"`
	ID      string  `xml:"id"`
	Updated Time    `xml:"updated"`
	Link    Link    `xml:"link"`
	Entries []Entry `xml:"entry"`
}

// MarshalXML writes the feed in the Atom namespace.
func (f Feed) MarshalXML(e *xml.Encoder, _ xml.StartElement) error {
	type plain Feed
	return e.EncodeElement(plain(f), xml.StartElement{Name: xml.Name{Space: NSAtom, Local: "feed"}})
}

// Entry is an Atom entry holding one description: an answer, an entry of a
// feed, or the body of a PUT (which has only Content).
type Entry struct {
	// XMLName is the element as read (a PUT body must be an entry);
	// Entry is always written as an Atom entry.
	XMLName xml.Name
	// Base is the xml:base Azure gives the entries of a feed, against
	// which their relative links resolve.
	Base      string   `xml:"http://www.w3.org/XML/1998/namespace base,attr,omitempty"`
	ID        string   `xml:"id,omitempty"`
	Title     *Text    `xml:"title"`
	Published *Time    `xml:"published"`
	Updated   *Time    `xml:"updated"`
	Author    *Author  `xml:"author"`
	Link      *Link    `xml:"link"`
	Content   *Content `xml:"content"`
}

// MarshalXML writes the entry in the Atom namespace.
func (en Entry) MarshalXML(e *xml.Encoder, _ xml.StartElement) error {
	type plain Entry
	return e.EncodeElement(plain(en), xml.StartElement{Name: xml.Name{Space: NSAtom, Local: "entry"}})
}

// Text is an Atom text construct, such as <title type="text">.
type Text struct {
	Type string `xml:"type,attr,omitempty"`
	Text string `xml:",chardata"`
}

// Author is an entry's author: the namespace's name.
type Author struct {
	Name string `xml:"name"`
}

// Link is an Atom link, such as rel="self".
type Link struct {
	Rel  string `xml:"rel,attr"`
	Href string `xml:"href,attr"`
}

// Content is an entry's content: one of the descriptions, with type
// "application/xml" (ContentTypeXML).
type Content struct {
	Type         string                   `xml:"type,attr,omitempty"`
	Queue        *QueueDescription        `xml:"QueueDescription"`
	Topic        *TopicDescription        `xml:"TopicDescription"`
	Subscription *SubscriptionDescription `xml:"SubscriptionDescription"`
	Rule         *RuleDescription         `xml:"RuleDescription"`
	Namespace    *NamespaceInfo           `xml:"NamespaceInfo"`
}

// Marshal encodes a document (a Feed or an Entry) after the XML
// declaration, as the management API answers.
func Marshal(doc any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	if err := xml.NewEncoder(&buf).Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// descriptionStart is the start of a description element: in the
// servicebus/connect namespace, with the i prefix bound to XML Schema
// instance.
func descriptionStart(local string) xml.StartElement {
	return xml.StartElement{
		Name: xml.Name{Space: NSServiceBus, Local: local},
		Attr: []xml.Attr{{Name: xml.Name{Local: "xmlns:" + PrefixInstance}, Value: NSInstance}},
	}
}
