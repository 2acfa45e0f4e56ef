package sqlfilter

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
)

func testMessage() *broker.Message {
	return &broker.Message{
		MessageID:     "m-1",
		CorrelationID: "order-42",
		Subject:       "created",
		To:            "shipping",
		ContentType:   "application/json",
		SessionID:     "s1",
		TimeToLive:    time.Minute,
		ApplicationProperties: map[string]any{
			"color":    "red",
			"Quantity": int32(5),
			"price":    12.5,
			"big":      uint64(1 << 63),
			"ok":       true,
			"nothing":  nil,
			"when":     time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
			"path":     "a%b_c",
			"héllo":    "wörld",
			"my prop":  int64(7),
			"and":      "kw",
		},
	}
}

// result is the outcome of a filter: match, no match because false, or no
// match because unknown (NOT of it does not match either).
type result int

const (
	isTrue result = iota
	isFalse
	isUnknown
)

// resultOf evaluates f's condition on m in three-valued logic.
func resultOf(f *Filter, m *broker.Message) result {
	switch f.root.test(m) {
	case tru:
		return isTrue
	case unknown:
		return isUnknown
	}
	return isFalse
}

func TestFilterTable(t *testing.T) {
	cases := []struct {
		expr string
		want result
	}{
		{"1=1", isTrue},
		{"1=0", isFalse},
		{"color = 'red'", isTrue},
		{"color = 'Red'", isFalse}, // ordinal, case-sensitive values
		{"COLOR = 'red'", isTrue},  // property names regardless of case
		{"user.color = 'red'", isTrue},
		{"USER.[color] = 'red'", isTrue},
		{`"color" = 'red'`, isTrue},
		{"color <> 'red'", isFalse},
		{"color != 'blue'", isTrue},
		{"missing = 'red'", isUnknown},
		{"missing <> 'red'", isUnknown},
		{"nothing = 1", isUnknown},
		{"quantity = 5", isTrue},
		{"quantity = 5.0", isTrue},
		{"quantity > 4 AND quantity < 6", isTrue},
		{"quantity >= 5 and quantity <= 5", isTrue},
		{"quantity + 1 = 6", isTrue},
		{"quantity * 2 - 1 = 9", isTrue},
		{"quantity / 2 = 2", isTrue}, // integer division
		{"quantity / 2.0 = 2.5", isTrue},
		{"quantity % 3 = 2", isTrue},
		{"quantity / 0 = 1", isUnknown},
		{"-quantity = -5", isTrue},
		{"- -quantity = 5", isTrue},
		{"+quantity = 5", isTrue},
		{"price > 12", isTrue},
		{"price = 12.5", isTrue},
		{"price = 1.25E1", isTrue},
		{"big >= 9223372036854775807", isTrue},
		{"big < 0", isFalse},
		{"2 + 3 * 4 = 14", isTrue},
		{"(2 + 3) * 4 = 20", isTrue},
		{"10 - 2 - 3 = 5", isTrue}, // left-associative
		{"'a' + 'b' = 'ab'", isTrue},
		{"'a' + 1 = 'a1'", isUnknown},
		{"quantity = '5'", isFalse}, // incompatible types: false
		{"quantity <> '5'", isFalse},
		{"NOT quantity = '5'", isTrue},
		{"ok = TRUE", isTrue},
		{"ok = false", isFalse},
		{"ok > FALSE", isFalse}, // booleans have no order
		{"ok = 1", isFalse},
		{"color IS NULL", isFalse},
		{"color IS NOT NULL", isTrue},
		{"missing IS NULL", isTrue},
		{"nothing IS NULL", isTrue},
		{"sys.ReplyTo IS NULL", isTrue},
		{"EXISTS(color)", isTrue},
		{"EXISTS(nothing)", isTrue},
		{"EXISTS(missing)", isFalse},
		{"NOT EXISTS(missing)", isTrue},
		{"exists(sys.To)", isTrue},
		{"EXISTS(sys.ReplyTo)", isFalse},
		{"color IN ('blue', 'red')", isTrue},
		{"color IN ('blue', 'green')", isFalse},
		{"color NOT IN ('blue', 'green')", isTrue},
		{"color IN ('blue', NULL)", isUnknown},
		{"color IN ('red', NULL)", isTrue},
		{"missing IN ('red')", isUnknown},
		{"quantity IN (1, 5.0)", isTrue},
		{"color LIKE 'r%'", isTrue},
		{"color LIKE 'R%'", isFalse},
		{"color LIKE 'r_d'", isTrue},
		{"color LIKE 'r_'", isFalse},
		{"color LIKE '%e%'", isTrue},
		{"color LIKE '%'", isTrue},
		{"color NOT LIKE 'b%'", isTrue},
		{"missing LIKE '%'", isUnknown},
		{"quantity LIKE '5'", isFalse},
		{"path LIKE 'a!%b!_c' ESCAPE '!'", isTrue},
		{"path LIKE 'a!%x%' ESCAPE '!'", isFalse},
		{"path LIKE 'a%b_c'", isTrue},
		{"[héllo] LIKE 'w_rld'", isTrue}, // _ is one character, not one byte
		{"[my prop] = 7", isTrue},
		{"[and] = 'kw'", isTrue},
		{"sys.MessageId = 'm-1'", isTrue},
		{"sys.messageid = 'm-1'", isTrue},
		{"sys.CorrelationId LIKE 'order-%'", isTrue},
		{"sys.Label = 'created'", isTrue},
		{"sys.Subject = 'created'", isTrue},
		{"sys.To = 'shipping' AND sys.ContentType = 'application/json'", isTrue},
		{"sys.SessionId = 's1'", isTrue},
		{"sys.DeliveryCount = 0", isTrue},
		{"sys.SequenceNumber > 0", isUnknown},
		{"property('color') = 'red'", isTrue},
		{"property('sys.Label') = 'created'", isTrue},
		{"newid() <> newid()", isTrue},
		{"newid() = 'x'", isFalse},
		{"when > when", isFalse},
		{"when = when", isTrue},
		// Three-valued logic.
		{"missing = 1 OR 1 = 1", isTrue},
		{"missing = 1 OR 1 = 0", isUnknown},
		{"missing = 1 AND 1 = 0", isFalse},
		{"missing = 1 AND 1 = 1", isUnknown},
		{"NOT (missing = 1)", isUnknown},
		{"NOT (1 = 1)", isFalse},
		{"not not 1 = 1", isTrue},
		{"1 = 1 OR 1 = 0 AND 1 = 0", isTrue}, // AND binds tighter
		{"(1 = 1 OR 1 = 0) AND 1 = 0", isFalse},
		{"  color='red'\n\tAND\r\nquantity=5  ", isTrue},
	}
	m := testMessage()
	for _, c := range cases {
		f, err := ParseFilter(c.expr)
		if err != nil {
			t.Errorf("ParseFilter(%q): %v", c.expr, err)
			continue
		}
		if got := resultOf(f, m); got != c.want {
			t.Errorf("%q = %v, want %v", c.expr, got, c.want)
		}
		if f.Match(m) != (c.want == isTrue) {
			t.Errorf("Match(%q) = %v", c.expr, f.Match(m))
		}
	}
}

func TestFilterErrors(t *testing.T) {
	cases := []struct{ expr, want string }{
		{"", `SQL filter "": at position 1: the expression is empty`},
		{"color = ", `SQL filter "color = ": at position 9: expected a value, found the end of the expression`},
		{"color = 'red", `SQL filter "color = 'red": at position 9: the string is not closed`},
		{"color", `SQL filter "color": at position 1: expected a condition (a comparison, IS NULL, IN, LIKE or EXISTS), found a value`},
		{"1 = 1 AND 2", `SQL filter "1 = 1 AND 2": at position 11: expected a condition (a comparison, IS NULL, IN, LIKE or EXISTS), found a value`},
		{"(1 = 1) + 2 = 3", `SQL filter "(1 = 1) + 2 = 3": at position 1: expected a value, found a condition`},
		{"a = 1 = 2", `SQL filter "a = 1 = 2": at position 7: expected AND, OR or the end of the filter, found "="`},
		{"a = 1 b", `SQL filter "a = 1 b": at position 7: expected AND, OR or the end of the filter, found "b"`},
		{"(a = 1", `SQL filter "(a = 1": at position 7: expected ")", found the end of the expression`},
		{"a = 1)", `SQL filter "a = 1)": at position 6: expected AND, OR or the end of the filter, found ")"`},
		{"a IS 1", `SQL filter "a IS 1": at position 6: expected NULL, found the number 1`},
		{"a NOT = 1", `SQL filter "a NOT = 1": at position 7: expected IN or LIKE after NOT, found "="`},
		{"a IN ()", `SQL filter "a IN ()": at position 7: expected a value, found ")"`},
		{"a LIKE b", `SQL filter "a LIKE b": at position 8: expected a pattern (a string in single quotes or a string parameter) after LIKE, found "b"`},
		{"a LIKE 'x' ESCAPE 'ab'", `SQL filter "a LIKE 'x' ESCAPE 'ab'": at position 19: expected one character in single quotes (or a parameter of one) after ESCAPE, found a string`},
		{"a LIKE 'x!' ESCAPE '!'", `SQL filter "a LIKE 'x!' ESCAPE '!'": at position 8: the LIKE pattern ends with its escape character`},
		{"sys.Nope = 1", `SQL filter "sys.Nope = 1": at position 5: sys.Nope is not a system property`},
		{"foo.bar = 1", `SQL filter "foo.bar = 1": at position 1: unknown scope "foo"; a property is sys.Name, user.name or name`},
		{"and = 1", `SQL filter "and = 1": at position 1: unexpected keyword AND; write [and] for a property of that name`},
		{"EXISTS(1)", `SQL filter "EXISTS(1)": at position 8: expected a property name, found the number 1`},
		{"a = @p", `SQL filter "a = @p": at position 5: the parameter @p has no value; give it one in the parameters`},
		{"a = @", `SQL filter "a = @": at position 5: a parameter needs a name after @ (letters, digits and _)`},
		{"a = 1 # 2", `SQL filter "a = 1 # 2": at position 7: unexpected character '#'`},
		{"a = 99999999999999999999", `SQL filter "a = 99999999999999999999": at position 5: the integer 99999999999999999999 is out of range`},
		{"a = 1e", `SQL filter "a = 1e": at position 6: the exponent of a number needs digits`},
		{"a = 1x", `SQL filter "a = 1x": at position 6: a number is followed by a letter`},
		{"a = [] ", `SQL filter "a = [] ": at position 5: a bracketed name is empty`},
		{"a = [x", `SQL filter "a = [x": at position 5: the bracketed name is not closed`},
		{"lower(a) = 1", `SQL filter "lower(a) = 1": at position 1: unknown function lower(); there are newid() and property(name)`},
		{"é = 1", `SQL filter "é = 1": at position 1: unexpected character 'é'`},
		{"[é] = 1 AND ü", `SQL filter "[é] = 1 AND ü": at position 13: unexpected character 'ü'`},
	}
	for _, c := range cases {
		_, err := ParseFilter(c.expr)
		var be *broker.Error
		if !errors.As(err, &be) || be.Code != broker.CodeInvalid {
			t.Errorf("ParseFilter(%q) = %v, want a CodeInvalid error", c.expr, err)
			continue
		}
		if be.Message != c.want {
			t.Errorf("ParseFilter(%q):\n got %s\nwant %s", c.expr, be.Message, c.want)
		}
	}
}

func TestFilterLimits(t *testing.T) {
	long := "a = '" + strings.Repeat("x", MaxLength) + "'"
	_, err := ParseFilter(long)
	if err == nil || !strings.Contains(err.Error(), "at position 1025: the expression is 1030 characters long; at most 1024 are allowed") {
		t.Errorf("long: %v", err)
	}
	// Exactly MaxLength characters (multi-byte ones count once) is fine.
	ok := "a = '" + strings.Repeat("é", MaxLength-6) + "'"
	if _, err := ParseFilter(ok); err != nil {
		t.Errorf("%d characters: %v", MaxLength, err)
	}
	deep := strings.Repeat("(", MaxDepth) + "1=1" + strings.Repeat(")", MaxDepth)
	if _, err := ParseFilter(deep); err != nil {
		t.Errorf("depth %d: %v", MaxDepth, err)
	}
	deeper := strings.Repeat("(", MaxDepth+1) + "1=1" + strings.Repeat(")", MaxDepth+1)
	_, err = ParseFilter(deeper)
	if err == nil || !strings.Contains(err.Error(), "at position 33: the expression nests more than 32 levels deep") {
		t.Errorf("depth %d: %v", MaxDepth+1, err)
	}
	nots := strings.Repeat("NOT ", MaxDepth+1) + "1=1"
	if _, err := ParseFilter(nots); err == nil || !strings.Contains(err.Error(), "nests more than") {
		t.Errorf("NOT chain: %v", err)
	}
	minus := "a = " + strings.Repeat("-", MaxDepth+1) + "1"
	if _, err := ParseFilter(minus); err == nil || !strings.Contains(err.Error(), "nests more than") {
		t.Errorf("minus chain: %v", err)
	}
}

func TestLikeMatch(t *testing.T) {
	cases := []struct {
		pat, s string
		want   bool
	}{
		{"", "", true},
		{"", "a", false},
		{"%", "", true},
		{"%%", "abc", true},
		{"a%c", "abbbc", true},
		{"a%c", "abbbcd", false},
		{"%b%b%", "abab", true},
		{"%bb%", "abab", false},
		{"_", "é", true},
		{"__", "é", false},
		{"a%a%a%a%b", strings.Repeat("a", 200), false},
	}
	for _, c := range cases {
		pat, _ := compileLike(c.pat, -1)
		if got := likeMatch(pat, c.s); got != c.want {
			t.Errorf("%q LIKE %q = %v, want %v", c.s, c.pat, got, c.want)
		}
	}
}

func TestFilterString(t *testing.T) {
	f, err := ParseFilter("a = 1")
	if err != nil || f.String() != "a = 1" {
		t.Fatalf("%v %v", f, err)
	}
}
