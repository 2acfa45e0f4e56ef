package wire

// Opt is an optional field value: Set is false when the field is absent
// (null on the wire).
type Opt[T any] struct {
	Value T
	Set   bool
}

// Some returns a set Opt holding v.
func Some[T any](v T) Opt[T] { return Opt[T]{Value: v, Set: true} }

// Get returns the value and whether it is set.
func (o Opt[T]) Get() (T, bool) { return o.Value, o.Set }
