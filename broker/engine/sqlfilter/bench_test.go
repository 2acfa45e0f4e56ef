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

func benchFilter(b *testing.B, expr string) {
	f, err := ParseFilter(expr)
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
