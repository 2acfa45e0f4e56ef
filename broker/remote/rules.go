package remote

import (
	"context"
	"encoding/xml"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/atom"
)

// values decodes a rule's typed values by name (nil when there are none);
// what names them in an error ("property", "parameter"). An int (short,
// byte) that fits is an int32, as the official Go SDK's admin client reads
// it.
func values(kv *atom.KeyValues, rule, what string) (map[string]any, error) {
	if kv == nil || len(kv.Items) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(kv.Items))
	for _, item := range kv.Items {
		v, err := item.Value.Decode()
		if err != nil {
			return nil, &broker.Error{Code: broker.CodeUnknown,
				Message: "rule " + strconv.Quote(rule) + ": " + what + " " + strconv.Quote(item.Key) + ": " + err.Error(), Err: err}
		}
		if n, ok := v.(int64); ok && n >= math.MinInt32 && n <= math.MaxInt32 {
			switch item.Value.Type.Local() {
			case "int", "short", "byte":
				v = int32(n)
			}
		}
		out[item.Key] = v
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
		var f atom.Feed
		if err := xml.Unmarshal(body, &f); err != nil {
			return nil, feedError(feedPath, err)
		}
		for _, e := range f.Entries {
			if e.Content == nil || e.Content.Rule == nil {
				continue
			}
			r, err := ruleOf(e.Content.Rule, title(e))
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

// ruleOf converts a RuleDescription; title is the entry's title, the name
// when the description has none.
func ruleOf(d *atom.RuleDescription, title string) (broker.Rule, error) {
	r := broker.Rule{Name: title}
	if d.Name != nil && *d.Name != "" {
		r.Name = *d.Name
	}
	if d.CreatedAt != nil {
		r.CreatedAt = d.CreatedAt.Time
	}
	if a := d.Action; a != nil && strings.EqualFold(a.Type.Local(), atom.SQLRuleAction) {
		if a.SQLExpression != nil {
			r.Action = *a.SQLExpression
		}
		params, err := values(a.Parameters, r.Name, "action parameter")
		if err != nil {
			return broker.Rule{}, err
		}
		r.ActionParameters = params
	}
	f := d.Filter
	if f == nil {
		return r, nil
	}
	switch t := f.Type.Local(); t {
	case atom.TrueFilter, "":
	case atom.FalseFilter:
		r.SQL = "1=0"
	case atom.SQLFilter:
		if f.SQLExpression != nil {
			r.SQL = *f.SQLExpression
		}
		if strings.TrimSpace(r.SQL) == "1=1" {
			r.SQL = "" // the TrueFilter written as SQL
		}
		params, err := values(f.Parameters, r.Name, "filter parameter")
		if err != nil {
			return broker.Rule{}, err
		}
		r.Parameters = params
	case atom.CorrelationFilter:
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
		props, err := values(f.Properties, r.Name, "property")
		if err != nil {
			return broker.Rule{}, err
		}
		cf.Properties = props
		r.Filter = cf
	default:
		// A filter type this client does not know: show it rather than
		// pretend it matches everything.
		r.SQL = "<" + t + ">"
	}
	return r, nil
}
