package sqlfilter

import "testing"

// BenchmarkFilterMatch evaluates a typical filter: two properties, a
// comparison, IN and LIKE.
func BenchmarkFilterMatch(b *testing.B) {
	f, err := ParseFilter("color IN ('red', 'blue') AND quantity > 3 AND sys.CorrelationId LIKE 'order-%'")
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
