package remote

import (
	"context"
	"encoding/base64"
	"encoding/xml"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/peeklock/peeklock/broker"
)

// ATOM rule documents, matched by local names as the official SDK's admin
// package reads them (internal/atom: RuleDescription, FilterDescription,
// ActionDescription).
type (
	ruleFeed struct {
		Entries []struct {
			Title   string `xml:"title"`
			Content struct {
				Rule *ruleDesc `xml:"RuleDescription"`
			} `xml:"content"`
		} `xml:"entry"`
	}
	ruleDesc struct {
		Name      string
		CreatedAt string
		Filter    struct {
			Type             string     `xml:"type,attr"`
			SQLExpression    *string    `xml:"SqlExpression"`
			CorrelationID    *string    `xml:"CorrelationId"`
			MessageID        *string    `xml:"MessageId"`
			To               *string    `xml:"To"`
			ReplyTo          *string    `xml:"ReplyTo"`
			Label            *string    `xml:"Label"`
			SessionID        *string    `xml:"SessionId"`
			ReplyToSessionID *string    `xml:"ReplyToSessionId"`
			ContentType      *string    `xml:"ContentType"`
			Properties       atomValues `xml:"Properties"`
			Parameters       atomValues `xml:"Parameters"`
		}
		Action struct {
			Type          string     `xml:"type,attr"`
			SQLExpression string     `xml:"SqlExpression"`
			Parameters    atomValues `xml:"Parameters"`
		}
	}
	// atomValues is a list of typed values by name: a correlation filter's
	// properties, or the parameters of a SQL filter or action.
	atomValues struct {
		Items []struct {
			Key   string `xml:"Key"`
			Value struct {
				Type string `xml:"type,attr"`
				Nil  bool   `xml:"nil,attr"`
				Text string `xml:",chardata"`
			} `xml:"Value"`
		} `xml:"KeyValueOfstringanyType"`
	}
)

// decode returns the values by name (nil when there are none); what names
// them in an error ("property", "parameter").
func (vs atomValues) decode(rule, what string) (map[string]any, error) {
	var out map[string]any
	for _, kv := range vs.Items {
		var v any
		if !kv.Value.Nil {
			var err error
			if v, err = atomValue(kv.Value.Type, kv.Value.Text); err != nil {
				return nil, &broker.Error{Code: broker.CodeUnknown,
					Message: "rule " + strconv.Quote(rule) + ": " + what + " " + strconv.Quote(kv.Key) + ": " + err.Error()}
			}
		}
		if out == nil {
			out = make(map[string]any, len(vs.Items))
		}
		out[kv.Key] = v
	}
	return out, nil
}

// SubscriptionRules reads the rules of the subscription at path
// ("topic/Subscriptions/name") from the admin API
// (GET {topic}/Subscriptions/{name}/Rules, every page), as the official
// SDK's admin client lists them. It implements broker.RuleReader.
// Endpoints without the admin API (generic AMQP 1.0) fail with
// CodeNotSupported; a refusal or an unreachable admin API fails with the
// admin API's error.
func (c *Client) SubscriptionRules(ctx context.Context, path string) ([]broker.Rule, error) {
	topic, sub, ok := broker.SplitSubscriptionPath(path)
	if !ok {
		return nil, broker.Errorf(broker.CodeInvalid, "%q is not a subscription path (topic/Subscriptions/name)", path)
	}
	if c.admin == nil {
		return nil, &broker.Error{Code: broker.CodeNotSupported,
			Message: "subscription rules cannot be read: this endpoint has no Service Bus admin API (generic AMQP 1.0)"}
	}
	ctx, cancel := c.opCtx(ctx)
	defer cancel()
	feedPath := url.PathEscape(topic) + "/Subscriptions/" + url.PathEscape(sub) + "/Rules"
	var out []broker.Rule
	for skip := 0; ; skip += adminPageSize {
		q := url.Values{"$skip": {strconv.Itoa(skip)}, "$top": {strconv.Itoa(adminPageSize)}}
		body, aerr := c.admin.get(ctx, feedPath, q)
		if aerr != nil {
			return nil, aerr.err
		}
		var f ruleFeed
		if err := xml.Unmarshal(body, &f); err != nil {
			return nil, &broker.Error{Code: broker.CodeUnknown, Message: "admin API /" + feedPath + ": the answer is not an ATOM feed of rules: " + err.Error()}
		}
		for _, e := range f.Entries {
			if e.Content.Rule == nil {
				continue
			}
			r, err := e.Content.Rule.rule(e.Title)
			if err != nil {
				return nil, &broker.Error{Code: broker.CodeUnknown, Message: "admin API /" + feedPath + ": " + err.Error()}
			}
			out = append(out, r)
		}
		if len(f.Entries) < adminPageSize {
			return out, nil
		}
	}
}

// rule converts a RuleDescription; title is the entry's title, the name
// when the description has none.
func (d *ruleDesc) rule(title string) (broker.Rule, error) {
	r := broker.Rule{Name: d.Name, CreatedAt: parseAtomTime(d.CreatedAt)}
	if r.Name == "" {
		r.Name = title
	}
	if strings.EqualFold(localName(d.Action.Type), "SqlRuleAction") {
		r.Action = d.Action.SQLExpression
		params, err := d.Action.Parameters.decode(r.Name, "action parameter")
		if err != nil {
			return broker.Rule{}, err
		}
		r.ActionParameters = params
	}
	f := d.Filter
	switch localName(f.Type) {
	case "TrueFilter", "":
	case "FalseFilter":
		r.SQL = "1=0"
	case "SqlFilter":
		if f.SQLExpression != nil {
			r.SQL = *f.SQLExpression
		}
		if strings.TrimSpace(r.SQL) == "1=1" {
			r.SQL = "" // the TrueFilter written as SQL
		}
		params, err := f.Parameters.decode(r.Name, "filter parameter")
		if err != nil {
			return broker.Rule{}, err
		}
		r.Parameters = params
	case "CorrelationFilter":
		str := func(p *string) string {
			if p == nil {
				return ""
			}
			return *p
		}
		cf := &broker.CorrelationFilter{
			CorrelationID: str(f.CorrelationID), MessageID: str(f.MessageID), To: str(f.To), ReplyTo: str(f.ReplyTo),
			Subject: str(f.Label), SessionID: str(f.SessionID), ReplyToSessionID: str(f.ReplyToSessionID),
			ContentType: str(f.ContentType),
		}
		props, err := f.Properties.decode(r.Name, "property")
		if err != nil {
			return broker.Rule{}, err
		}
		cf.Properties = props
		r.Filter = cf
	default:
		// A filter type this client does not know: show it rather than
		// pretend it matches everything.
		r.SQL = "<" + localName(f.Type) + ">"
	}
	return r, nil
}

// localName strips a namespace prefix: "d6p1:string" is "string".
func localName(s string) string {
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// atomValue reads a typed value of a correlation filter's properties
// (i:type="d6p1:int" with XML Schema type names, as Service Bus writes
// them).
func atomValue(typ, text string) (any, error) {
	text = strings.TrimSpace(text)
	switch localName(typ) {
	case "string", "":
		return text, nil
	case "boolean":
		return strconv.ParseBool(text)
	case "int", "short", "byte":
		v, err := strconv.ParseInt(text, 10, 32)
		return int32(v), err
	case "long":
		return strconv.ParseInt(text, 10, 64)
	case "unsignedByte", "unsignedShort", "unsignedInt", "unsignedLong":
		return strconv.ParseUint(text, 10, 64)
	case "double", "float", "decimal":
		return strconv.ParseFloat(text, 64)
	case "dateTime":
		t := parseAtomTime(text)
		if t.IsZero() && text != "0001-01-01T00:00:00" {
			return nil, &broker.Error{Code: broker.CodeUnknown, Message: strconv.Quote(text) + " is not a dateTime"}
		}
		return t, nil
	case "duration":
		return parseISODuration(text), nil
	case "guid":
		return uuid.Parse(text)
	case "base64Binary":
		return base64.StdEncoding.DecodeString(text)
	}
	return nil, &broker.Error{Code: broker.CodeUnknown, Message: "the value type " + strconv.Quote(typ) + " is not known"}
}
