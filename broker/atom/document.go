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
	Title   Text   `xml:"title"`
	ID      string `xml:"id"`
	Updated Time   `xml:"updated"`
	// Links are the feed's self link and, when a listing has more entries
	// than the page holds, its next link (with $skip for the next page).
	Links   []Link  `xml:"link"`
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
// declaration, as the management API answers, with text escaped as Service
// Bus escapes it (see plainText).
func Marshal(doc any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	if err := xml.NewEncoder(&buf).Encode(doc); err != nil {
		return nil, err
	}
	return plainText(buf.Bytes()), nil
}

// encoding/xml writes quotes, tabs and newlines in text as numeric
// character references; Service Bus writes them as they are, and the
// JavaScript SDK's XML parser leaves references undecoded (a SQL filter
// SET a='b' came back as SET a=&#39;b&#39;). plainText turns them back into
// the characters outside tags, where XML allows them; inside a tag only
// the apostrophe (attribute values are in double quotes). encoding/xml
// escapes every '<' and '>' of text and attribute values, so the ones left
// are the tags' own. A carriage return stays a reference: a parser would
// read a literal one as a newline.
func plainText(b []byte) []byte {
	out := b[:0] // every replacement is shorter than what it replaces
	inTag := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch c {
		case '<':
			inTag = true
		case '>':
			inTag = false
		case '&':
			if r, n := plainRef(b[i:], inTag); n > 0 {
				out = append(out, r)
				i += n - 1
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// plainRef returns the character a reference at the start of b stands for
// and its length, when plainText writes it as it is; n is 0 otherwise.
func plainRef(b []byte, inTag bool) (c byte, n int) {
	refs := [...]struct {
		ref  string
		c    byte
		text bool // only outside tags
	}{{"&#39;", '\'', false}, {"&#34;", '"', true}, {"&#x9;", '\t', true}, {"&#xA;", '\n', true}}
	for _, r := range refs {
		if (!r.text || !inTag) && bytes.HasPrefix(b, []byte(r.ref)) {
			return r.c, len(r.ref)
		}
	}
	return 0, 0
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
