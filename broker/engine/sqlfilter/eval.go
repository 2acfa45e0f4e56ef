package sqlfilter

import (
	"math"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/peeklock/peeklock/broker"
)

// tri is a three-valued truth value.
type tri uint8

const (
	fls tri = iota
	tru
	unknown
)

func triOf(b bool) tri {
	if b {
		return tru
	}
	return fls
}

// expr is a node that has a value; pred is a node that has a truth value.
type (
	expr interface{ eval(m *broker.Message) value }
	pred interface{ test(m *broker.Message) tri }
)

type (
	literal struct{ v value }
	userRef struct{ name string }
	sysRef  struct{ p sysProp }
	newID   struct{}
	negate  struct{ x expr }
	arith   struct {
		op   byte // + - * / %
		l, r expr
	}
	logic struct {
		and  bool
		l, r pred
	}
	not    struct{ x pred }
	isNull struct {
		x   expr
		neg bool
	}
	exists struct{ ref expr }
	cmpOp  struct {
		op   string
		l, r expr
	}
	inList struct {
		x    expr
		list []expr
		neg  bool
	}
	like struct {
		x   expr
		pat []likeElem
		neg bool
	}
)

func (n literal) eval(*broker.Message) value { return n.v }

func (n userRef) eval(m *broker.Message) value {
	v, ok := userValue(m, n.name)
	if !ok {
		return null
	}
	return fromAny(v)
}

func (n sysRef) eval(m *broker.Message) value { return n.p.get(m) }

func (newID) eval(*broker.Message) value { return value{k: kOther, o: uuid.New()} }

func (n negate) eval(m *broker.Message) value {
	v := n.x.eval(m)
	switch v.k {
	case kInt:
		v.i = -v.i
		return v
	case kFloat:
		v.f = -v.f
		return v
	}
	return null
}

func (n arith) eval(m *broker.Message) value {
	a, b, ok := operands(n.l, n.r, m)
	if !ok {
		return null
	}
	if a.k == kString && b.k == kString && n.op == '+' {
		return value{k: kString, s: a.s + b.s}
	}
	if !isNum(a) || !isNum(b) {
		return null
	}
	if a.k == kInt && b.k == kInt {
		x, y := a.i, b.i
		switch n.op {
		case '+':
			return value{k: kInt, i: x + y}
		case '-':
			return value{k: kInt, i: x - y}
		case '*':
			return value{k: kInt, i: x * y}
		case '/', '%':
			if y == 0 {
				return null
			}
			if y == -1 { // MinInt64 / -1 would trap
				if n.op == '%' {
					return value{k: kInt}
				}
				return value{k: kInt, i: -x}
			}
			if n.op == '/' {
				return value{k: kInt, i: x / y}
			}
			return value{k: kInt, i: x % y}
		}
	}
	x, y := a.num(), b.num()
	switch n.op {
	case '+':
		return value{k: kFloat, f: x + y}
	case '-':
		return value{k: kFloat, f: x - y}
	case '*':
		return value{k: kFloat, f: x * y}
	case '/':
		return value{k: kFloat, f: x / y}
	}
	return value{k: kFloat, f: math.Mod(x, y)}
}

func (n logic) test(m *broker.Message) tri {
	a := n.l.test(m)
	if n.and {
		if a == fls {
			return fls
		}
		b := n.r.test(m)
		switch {
		case b == fls:
			return fls
		case a == tru && b == tru:
			return tru
		}
		return unknown
	}
	if a == tru {
		return tru
	}
	b := n.r.test(m)
	switch {
	case b == tru:
		return tru
	case a == fls && b == fls:
		return fls
	}
	return unknown
}

func (n not) test(m *broker.Message) tri {
	switch n.x.test(m) {
	case tru:
		return fls
	case fls:
		return tru
	}
	return unknown
}

func (n isNull) test(m *broker.Message) tri {
	return triOf((n.x.eval(m).k == kNull) != n.neg)
}

func (n exists) test(m *broker.Message) tri {
	switch r := n.ref.(type) {
	case userRef:
		_, ok := userValue(m, r.name)
		return triOf(ok)
	case sysRef:
		return triOf(r.p.get(m).k != kNull)
	}
	return fls
}

func (n cmpOp) test(m *broker.Message) tri {
	a, b, ok := operands(n.l, n.r, m)
	if !ok {
		return unknown
	}
	return triOf(cmpValues(n.op, a, b))
}

// operands evaluates the two operands of a binary operator; ok is false when
// either is NULL (the right one is not evaluated when the left one is).
func operands(l, r expr, m *broker.Message) (a, b value, ok bool) {
	if a = l.eval(m); a.k == kNull {
		return a, b, false
	}
	b = r.eval(m)
	return a, b, b.k != kNull
}

// cmpValues applies a comparison operator to two values that are not NULL.
func cmpValues(op string, a, b value) bool {
	c, ordered, ok := compare(a, b)
	if !ok {
		return false
	}
	switch op {
	case "=":
		return c == 0
	case "<>", "!=":
		return c != 0
	}
	if !ordered {
		return false
	}
	switch op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

func (n inList) test(m *broker.Message) tri {
	a := n.x.eval(m)
	if a.k == kNull {
		return unknown
	}
	res := fls
	for _, e := range n.list {
		b := e.eval(m)
		if b.k == kNull {
			res = unknown
			continue
		}
		if cmpValues("=", a, b) {
			res = tru
			break
		}
	}
	if n.neg && res != unknown {
		res ^= 1
	}
	return res
}

func (n like) test(m *broker.Message) tri {
	a := n.x.eval(m)
	switch a.k {
	case kNull:
		return unknown
	case kString:
		return triOf(likeMatch(n.pat, a.s) != n.neg)
	}
	return fls
}

// likeElem is one element of a compiled LIKE pattern.
type likeElem struct {
	kind uint8 // likeLit, likeOne, likeAny
	r    rune
}

const (
	likeLit uint8 = iota
	likeOne
	likeAny
)

// compileLike compiles a LIKE pattern: % is any run of characters, _ is one
// character, and esc (when not -1) makes the character after it literal.
// ok is false when the pattern ends with the escape character.
func compileLike(pat string, esc rune) ([]likeElem, bool) {
	var out []likeElem
	escaped := false
	for _, r := range pat {
		switch {
		case escaped:
			out = append(out, likeElem{likeLit, r})
			escaped = false
		case r == esc:
			escaped = true
		case r == '%':
			if len(out) == 0 || out[len(out)-1].kind != likeAny {
				out = append(out, likeElem{kind: likeAny})
			}
		case r == '_':
			out = append(out, likeElem{kind: likeOne})
		default:
			out = append(out, likeElem{likeLit, r})
		}
	}
	return out, !escaped
}

// likeMatch reports whether s matches the compiled pattern: a greedy scan
// that backtracks only to the last %, so it takes at most
// O(len(s)·len(pat)) steps.
func likeMatch(pat []likeElem, s string) bool {
	pi, si := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		if pi < len(pat) {
			switch e := pat[pi]; e.kind {
			case likeAny:
				starP, starS = pi, si
				pi++
				continue
			case likeOne:
				_, n := utf8.DecodeRuneInString(s[si:])
				si += n
				pi++
				continue
			default:
				if r, n := utf8.DecodeRuneInString(s[si:]); r == e.r {
					si += n
					pi++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		_, n := utf8.DecodeRuneInString(s[starS:])
		starS += n
		pi, si = starP+1, starS
	}
	for pi < len(pat) && pat[pi].kind == likeAny {
		pi++
	}
	return pi == len(pat)
}
