package sqlfilter

import (
	"testing"
	"unicode/utf8"
)

// FuzzParseSQLFilter checks that parsing any text either fails with an
// error or gives a filter that evaluates without panicking, and that the
// same holds for actions.
func FuzzParseSQLFilter(f *testing.F) {
	for _, s := range []string{
		"1=1", "color = 'red' AND quantity > 5", "NOT (a IS NULL) OR b IN (1, 2.5, 'x')",
		"sys.Label LIKE 'a!%%' ESCAPE '!'", "EXISTS([my prop]) AND -a * 2 % 3 / 4 - 1 <> 0",
		"property('sys.To') = newid()", "SET a = 1; REMOVE b, SET sys.To = 'x'", "((((a=1))))",
	} {
		f.Add(s)
	}
	m := testMessage()
	f.Fuzz(func(t *testing.T, s string) {
		if fl, err := ParseFilter(s); err == nil {
			fl.Match(m)
		} else if utf8.RuneCountInString(s) > MaxLength+10 && err.Error() == "" {
			t.Fatal("empty error")
		}
		if a, err := ParseAction(s); err == nil {
			c := *m
			a.Apply(&c)
		}
	})
}
