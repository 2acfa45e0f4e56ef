package sqlfilter

import "testing"

// BenchmarkFilterMatch evaluates a typical filter: two application
// properties (named as sent), a comparison, IN and LIKE on a system
// property.
func BenchmarkFilterMatch(b *testing.B) {
	benchFilter(b, "color IN ('red', 'blue') AND Quantity > 3 AND sys.CorrelationId LIKE 'order-%'")
}

// BenchmarkFilterMatchFoldedName is the same filter with a property name in
// another case than sent, which costs a scan of the properties.
func BenchmarkFilterMatchFoldedName(b *testing.B) {
	benchFilter(b, "color IN ('red', 'blue') AND quantity > 3 AND sys.CorrelationId LIKE 'order-%'")
}

// BenchmarkFilterMatchParameters is BenchmarkFilterMatch with its values
// given as parameters: they are bound when parsed, so it costs the same.
func BenchmarkFilterMatchParameters(b *testing.B) {
	benchFilterWith(b, "color IN (@c1, @c2) AND Quantity > @min AND sys.CorrelationId LIKE @pat",
		map[string]any{"@c1": "red", "@c2": "blue", "@min": int64(3), "@pat": "order-%"})
}

func benchFilter(b *testing.B, expr string) { benchFilterWith(b, expr, nil) }

func benchFilterWith(b *testing.B, expr string, params map[string]any) {
	f, err := ParseFilterWith(expr, params)
	if err != nil {
		b.Fatal(err)
	}
	m := testMessage()
	b.ReportAllocs()
	for b.Loop() {
		if !f.Match(m) {
			b.Fatal("no match")
		}
	}
}
