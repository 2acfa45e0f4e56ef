package atom

import (
	"encoding/xml"
	"strconv"
)

// SharedAccessAuthorizationRule is the type of every authorization rule
// Service Bus writes, with ClaimType SharedAccessKey and ClaimValue None.
const SharedAccessAuthorizationRule = "SharedAccessAuthorizationRule"

// AuthorizationRules are an entity's own shared access rules.
type AuthorizationRules struct {
	Rules []AuthorizationRule `xml:"AuthorizationRule"`
}

// UnmarshalXML reads the rules; a malformed value is a *ValueError that
// names AuthorizationRules[i].<element>.
func (a *AuthorizationRules) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	a.Rules = nil
	for {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local != "AuthorizationRule" {
				if err := d.Skip(); err != nil {
					return err
				}
				continue
			}
			var r AuthorizationRule
			if err := d.DecodeElement(&r, &t); err != nil {
				return within(start.Name.Local+"["+strconv.Itoa(len(a.Rules))+"]", err)
			}
			a.Rules = append(a.Rules, r)
		case xml.EndElement:
			return nil
		}
	}
}

// AuthorizationRule is a SharedAccessAuthorizationRule (its Type), its
// elements in Azure's order; the times only when known.
type AuthorizationRule struct {
	Type         InstanceType `xml:"type,attr"`
	ClaimType    string       `xml:"ClaimType"`
	ClaimValue   string       `xml:"ClaimValue"`
	Rights       []string     `xml:"Rights>AccessRights"`
	CreatedTime  *Time        `xml:"CreatedTime"`
	ModifiedTime *Time        `xml:"ModifiedTime"`
	KeyName      string       `xml:"KeyName"`
	PrimaryKey   string       `xml:"PrimaryKey"`
	SecondaryKey string       `xml:"SecondaryKey,omitempty"`
}
