package sqlfilter

import "github.com/peeklock/peeklock/broker"

// Filter is a parsed SQL filter expression. It is safe for concurrent use.
type Filter struct {
	src  string
	root pred
}

// ParseFilter parses a SQL filter expression without parameters (an @name
// in it is an error). A malformed expression gives a *broker.Error with
// CodeInvalid whose message names the 1-based character position of the
// problem.
func ParseFilter(src string) (*Filter, error) { return ParseFilterWith(src, nil) }

// ParseFilterWith parses a SQL filter expression whose parameters (@name)
// take their values from params, keyed by name with the @ ("@p1"), as
// Service Bus's SqlFilter.Parameters. The values are bound now: a parameter
// that params does not have is a CodeInvalid error with its position, and
// evaluating the filter costs the same as with the values written as
// literals. params may hold values the expression does not use. Keys and
// values are checked as the package documentation describes.
func ParseFilterWith(src string, params map[string]any) (*Filter, error) {
	p, err := newParser("SQL filter", src, params)
	if err != nil {
		return nil, err
	}
	it, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		return nil, p.unexpected("AND, OR or the end of the filter")
	}
	root, err := p.asPred(it)
	if err != nil {
		return nil, err
	}
	return &Filter{src: src, root: root}, nil
}

// Match reports whether m satisfies the filter: true, not false or unknown.
func (f *Filter) Match(m *broker.Message) bool { return f.root.test(m) == tru }

// String returns the expression as it was parsed.
func (f *Filter) String() string { return f.src }
