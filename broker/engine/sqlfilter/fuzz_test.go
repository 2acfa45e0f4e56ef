package sqlfilter

import (
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzParseSQLFilter checks that parsing any text either fails with an
// error or gives a filter that evaluates without panicking, with and
// without parameter values, and that the same holds for actions.
func FuzzParseSQLFilter(f *testing.F) {
	for _, s := range []string{
		"1=1", "color = 'red' AND quantity > 5", "NOT (a IS NULL) OR b IN (1, 2.5, 'x')",
		"sys.Label LIKE 'a!%%' ESCAPE '!'", "EXISTS([my prop]) AND -a * 2 % 3 / 4 - 1 <> 0",
		"property('sys.To') = newid()", "SET a = 1; REMOVE b, SET sys.To = 'x'", "((((a=1))))",
		"a = @p AND color LIKE @s ESCAPE @e", "-@n * @f > @N OR @t = @d", "SET x = @p, SET sys.To = @s; REMOVE @p",
		"a IN (@p, @missing) OR @", "@@p = @p1_x",
	} {
		f.Add(s)
	}
	m := testMessage()
	params := map[string]any{
		"@p": int64(1), "@n": int32(-2), "@f": 1.5, "@s": "a%", "@e": "!", "@t": time.Unix(0, 0).UTC(),
		"@d": time.Second, "@N": nil, "@b": true, "@P": "upper",
	}
	f.Fuzz(func(t *testing.T, s string) {
		if fl, err := ParseFilter(s); err == nil {
			fl.Match(m)
		} else if utf8.RuneCountInString(s) > MaxLength+10 && err.Error() == "" {
			t.Fatal("empty error")
		}
		if fl, err := ParseFilterWith(s, params); err == nil {
			fl.Match(m)
		}
		if a, err := ParseActionWith(s, params); err == nil {
			c := *m
			a.Apply(&c)
		}
	})
}
