package atom

import (
	"bytes"
	"encoding/xml"
	"testing"
)

// Text keeps its quotes, tabs and newlines as Service Bus writes them, not
// as numeric character references, and still decodes to what it was.
func TestMarshalWritesTextAsServiceBus(t *testing.T) {
	sql := "SET a='b'\n\tAND c = \"d\" & e < f > g\r"
	rule := &RuleDescription{Filter: &Filter{Type: SQLFilter, SQLExpression: ref(sql)},
		Action: &Action{Type: SQLRuleAction, SQLExpression: ref(sql)}, Name: ref("it's")}
	doc := Entry{Title: &Text{Type: "text", Text: "r'1"}, Content: &Content{Type: "application/xml", Rule: rule}}
	b, err := Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"&#39;", "&#34;", "&#x9;", "&#xA;"} {
		if bytes.Contains(b, []byte(ref)) {
			t.Errorf("%s written as a reference:\n%s", ref, b)
		}
	}
	if want := "SET a='b'\n\tAND c = \"d\" &amp; e &lt; f &gt; g&#xD;"; !bytes.Contains(b, []byte(want)) {
		t.Errorf("the SQL expression is not written as %q:\n%s", want, b)
	}
	var back Entry
	if err := xml.Unmarshal(b, &back); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	got := back.Content.Rule
	if *got.Filter.SQLExpression != sql || *got.Action.SQLExpression != sql || *got.Name != "it's" || back.Title.Text != "r'1" {
		t.Errorf("decoded %q, %q, %q, %q; want %q, its name it's and title r'1", *got.Filter.SQLExpression, *got.Action.SQLExpression, *got.Name, back.Title, sql)
	}
}

// Inside a tag only the apostrophe is written plainly: attribute values are
// in double quotes.
func TestPlainTextKeepsQuotesInTags(t *testing.T) {
	in := `<a x="&#34;&#39;&#xA;">&#34;&#39;&#x9;&#xD;&amp;#39;</a>`
	want := `<a x="&#34;'&#xA;">"'` + "\t" + `&#xD;&amp;#39;</a>`
	if got := string(plainText([]byte(in))); got != want {
		t.Errorf("plainText(%q) = %q, want %q", in, got, want)
	}
}
