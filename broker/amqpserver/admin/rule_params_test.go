package admin

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// ruleEntry is a PUT body with a RuleDescription whose inner XML is %s, the
// instance namespace bound to i and l28 to XML Schema as the Go SDK does.
const ruleEntry = `<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml">` +
	`<RuleDescription xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect" xmlns:i="http://www.w3.org/2001/XMLSchema-instance">%s</RuleDescription></content></entry>`

func ruleBody(inner string) string { return strings.Replace(ruleEntry, "%s", inner, 1) }

// param is one KeyValueOfstringanyType with a value of XML Schema type typ
// ("" for i:nil).
func param(key, typ, text string) string {
	if typ == "" {
		return `<KeyValueOfstringanyType><Key>` + key + `</Key><Value i:nil="true"/></KeyValueOfstringanyType>`
	}
	return `<KeyValueOfstringanyType><Key>` + key + `</Key><Value i:type="l28:` + typ + `" xmlns:l28="http://www.w3.org/2001/XMLSchema">` + text + `</Value></KeyValueOfstringanyType>`
}

// TestRuleParametersXML: Parameters as raw XML: every XML Schema type the
// SDKs send is read into its Go type, i:nil is nil, a SqlFilter 1=1 with
// parameters stays a SqlFilter, GET writes them back as the SDK parses
// them, and bad Parameters are refused with 400.
func TestRuleParametersXML(t *testing.T) {
	f := newFixture(t)
	f.create(broker.Entity{Path: "t", Kind: broker.KindTopic}, broker.Entity{Path: "t/Subscriptions/s", Kind: broker.KindSubscription})
	root := "sb://" + f.host
	body := ruleBody(`<Filter i:type="SqlFilter"><SqlExpression>a = @s OR b = @n OR c = @d OR d = @b OR e = @t OR f = @span OR g = @nothing</SqlExpression><Parameters>` +
		param("@s", "string", "x &amp; y") + param("@n", "int", "-7") + param("@long", "long", "5000000000") + param("@d", "double", "100.100000") +
		param("@b", "boolean", "true") + param("@t", "dateTime", "2001-01-01T01:02:03.5+01:00") + param("@span", "duration", "PT1M30S") + param("@nothing", "", "") +
		`</Parameters></Filter><Action i:type="SqlRuleAction"><SqlExpression>SET x = @x</SqlExpression><Parameters>` + param("@x", "string", "v") + `</Parameters></Action>`)
	if status, out, _ := f.do("PUT", "/t/Subscriptions/s/Rules/r", root, body, nil); status != http.StatusCreated {
		t.Fatalf("PUT: %d %s", status, out)
	}
	ent, _ := f.eng.Entity(f.ctx, "t/Subscriptions/s")
	wantParams := map[string]any{"@s": "x & y", "@n": int64(-7), "@long": int64(5000000000), "@d": 100.1, "@b": true,
		"@t": time.Date(2001, 1, 1, 0, 2, 3, 500000000, time.UTC), "@span": 90 * time.Second, "@nothing": nil}
	// The subscription keeps its $Default rule, then r.
	if len(ent.Rules) != 2 || !reflect.DeepEqual(ent.Rules[1].Parameters, wantParams) || !reflect.DeepEqual(ent.Rules[1].ActionParameters, map[string]any{"@x": "v"}) {
		t.Fatalf("rules %s", dump(ent.Rules))
	}
	status, out, _ := f.do("GET", "/t/Subscriptions/s/Rules/r", root, "", nil)
	const schema = ` xmlns:d6p1="http://www.w3.org/2001/XMLSchema"`
	for _, want := range []string{
		`<Parameters><KeyValueOfstringanyType><Key>@b</Key><Value i:type="d6p1:boolean"` + schema + `>true</Value></KeyValueOfstringanyType>` +
			`<KeyValueOfstringanyType><Key>@d</Key><Value i:type="d6p1:double"` + schema + `>100.1</Value></KeyValueOfstringanyType>` +
			`<KeyValueOfstringanyType><Key>@long</Key><Value i:type="d6p1:long"` + schema + `>5000000000</Value></KeyValueOfstringanyType>` +
			`<KeyValueOfstringanyType><Key>@n</Key><Value i:type="d6p1:int"` + schema + `>-7</Value></KeyValueOfstringanyType>` +
			`<KeyValueOfstringanyType><Key>@nothing</Key><Value i:nil="true"></Value></KeyValueOfstringanyType>` +
			`<KeyValueOfstringanyType><Key>@s</Key><Value i:type="d6p1:string"` + schema + `>x &amp; y</Value></KeyValueOfstringanyType>` +
			`<KeyValueOfstringanyType><Key>@span</Key><Value i:type="d6p1:duration"` + schema + `>PT1M30S</Value></KeyValueOfstringanyType>` +
			`<KeyValueOfstringanyType><Key>@t</Key><Value i:type="d6p1:dateTime"` + schema + `>2001-01-01T00:02:03.5Z</Value></KeyValueOfstringanyType></Parameters></Filter>`,
		`<Action i:type="SqlRuleAction"><SqlExpression>SET x = @x</SqlExpression><Parameters><KeyValueOfstringanyType><Key>@x</Key><Value i:type="d6p1:string"` + schema + `>v</Value></KeyValueOfstringanyType></Parameters><CompatibilityLevel>20</CompatibilityLevel></Action>`,
	} {
		if status != http.StatusOK || !strings.Contains(out, want) {
			t.Fatalf("GET: %d %s\nwant it to contain %s", status, out, want)
		}
	}

	// 1=1 with parameters is a SqlFilter, not the TrueFilter.
	body = ruleBody(`<Filter i:type="SqlFilter"><SqlExpression>1=1</SqlExpression><Parameters>` + param("@p", "int", "1") + `</Parameters></Filter>`)
	if status, out, _ := f.do("PUT", "/t/Subscriptions/s/Rules/one", root, body, nil); status != http.StatusCreated {
		t.Fatalf("PUT one: %d %s", status, out)
	}
	if status, out, _ := f.do("GET", "/t/Subscriptions/s/Rules/one", root, "", nil); status != http.StatusOK || !strings.Contains(out, `<Filter i:type="SqlFilter"><SqlExpression>1=1</SqlExpression>`) {
		t.Fatalf("GET one: %d %s", status, out)
	}

	for _, c := range []struct{ name, inner, msg string }{
		{"true filter", `<Filter i:type="TrueFilter"><SqlExpression>1=1</SqlExpression><Parameters>` + param("@p", "int", "1") + `</Parameters></Filter>`,
			`rule "bad": a TrueFilter has no Parameters; only a SqlFilter has`},
		{"correlation filter", `<Filter i:type="CorrelationFilter"><Parameters>` + param("@p", "int", "1") + `</Parameters></Filter>`,
			`rule "bad": a CorrelationFilter has no Parameters; only a SqlFilter has`},
		{"other element", `<Filter i:type="SqlFilter"><SqlExpression>a = 1</SqlExpression><Parameters><Item/></Parameters></Filter>`,
			`rule "bad": the SqlFilter Parameters hold a Item element; only KeyValueOfstringanyType is allowed`},
		{"no key", `<Filter i:type="SqlFilter"><SqlExpression>a = 1</SqlExpression><Parameters>` + param("", "int", "1") + `</Parameters></Filter>`,
			`rule "bad": a SqlFilter parameter has no Key`},
		{"twice", `<Filter i:type="SqlFilter"><SqlExpression>a = @p</SqlExpression><Parameters>` + param("@p", "int", "1") + param("@p", "int", "2") + `</Parameters></Filter>`,
			`rule "bad": the SqlFilter parameter "@p" appears twice`},
		{"bad value", `<Filter i:type="SqlFilter"><SqlExpression>a = @p</SqlExpression><Parameters>` + param("@p", "int", "x") + `</Parameters></Filter>`,
			`rule "bad": SqlFilter parameter "@p": "x" is not a valid int`},
		{"bad action value", `<Action i:type="SqlRuleAction"><SqlExpression>SET a = @p</SqlExpression><Parameters>` + param("@p", "boolean", "yes") + `</Parameters></Action>`,
			`rule "bad": SqlRuleAction parameter "@p": "yes" is not a valid boolean`},
		{"unknown type", `<Filter i:type="SqlFilter"><SqlExpression>a = @p</SqlExpression><Parameters>` + param("@p", "QName", "x") + `</Parameters></Filter>`,
			`rule "bad": SqlFilter parameter "@p": the type "QName" is not supported`},
		{"missing", `<Filter i:type="SqlFilter"><SqlExpression>a = @q</SqlExpression><Parameters>` + param("@p", "int", "1") + `</Parameters></Filter>`,
			`rule "bad": SQL filter "a = @q": at position 5: the parameter @q has no value; give it one in the parameters`},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, out, hdr := f.do("PUT", "/t/Subscriptions/s/Rules/bad", root, ruleBody(c.inner), nil)
			checkError(t, status, out, hdr, http.StatusBadRequest, c.msg, f.host+":t/Subscriptions/s/Rules/bad")
		})
	}
}
