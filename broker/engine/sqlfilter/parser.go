package sqlfilter

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits on an expression.
const (
	// MaxLength is the longest expression accepted, in characters, as in
	// Service Bus.
	MaxLength = 1024
	// MaxDepth is the deepest nesting accepted: parentheses, NOT, unary
	// signs and function arguments each add a level.
	MaxDepth = 32
)

// keywords are reserved: a property with such a name must be bracketed.
var keywords = map[string]bool{
	"and": true, "or": true, "not": true, "is": true, "null": true, "in": true, "like": true,
	"escape": true, "exists": true, "true": true, "false": true, "set": true, "remove": true,
}

// parser is a recursive-descent parser with one token of look-ahead.
type parser struct {
	lex    lexer
	tok    token
	depth  int
	params map[string]any // the values of @name, by name with its @
}

// item is a parsed node: an expression or a predicate (exactly one is set).
type item struct {
	e   expr
	p   pred
	pos int
}

func newParser(what, src string, params map[string]any) (*parser, error) {
	if err := checkParams(what, params); err != nil {
		return nil, err
	}
	p := &parser{lex: lexer{src: src, pos: 1, what: what}, params: params}
	if n := utf8.RuneCountInString(src); n > MaxLength {
		return nil, p.lex.errAt(MaxLength+1, "the expression is %d characters long; at most %d are allowed", n, MaxLength)
	}
	if strings.TrimSpace(src) == "" {
		return nil, p.lex.errAt(1, "the expression is empty")
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *parser) advance() error {
	t, err := p.lex.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func (p *parser) errAt(pos int, format string, args ...any) error {
	return p.lex.errAt(pos, format, args...)
}

// describe names the current token for an error message.
func (p *parser) describe() string {
	switch p.tok.kind {
	case tEOF:
		return "the end of the expression"
	case tString:
		return "a string"
	case tQuotedIdent:
		return "the name [" + p.tok.text + "]"
	case tParam:
		return "the parameter " + p.tok.text
	case tInt, tFloat:
		return "the number " + p.tok.text
	}
	return strconv.Quote(p.tok.text)
}

func (p *parser) unexpected(want string) error {
	return p.errAt(p.tok.pos, "expected %s, found %s", want, p.describe())
}

// isKw reports whether the current token is the keyword kw (lower case).
func (p *parser) isKw(kw string) bool {
	return p.tok.kind == tIdent && strings.EqualFold(p.tok.text, kw)
}

func (p *parser) isOp(op string) bool { return p.tok.kind == tOp && p.tok.text == op }

func (p *parser) expectOp(op string) error {
	if !p.isOp(op) {
		return p.unexpected(strconv.Quote(op))
	}
	return p.advance()
}

func (p *parser) enter(pos int) error {
	p.depth++
	if p.depth > MaxDepth {
		return p.errAt(pos, "the expression nests more than %d levels deep", MaxDepth)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// asPred and asExpr check an operand's kind.
func (p *parser) asPred(it item) (pred, error) {
	if it.p == nil {
		return nil, p.errAt(it.pos, "expected a condition (a comparison, IS NULL, IN, LIKE or EXISTS), found a value")
	}
	return it.p, nil
}

func (p *parser) asExpr(it item) (expr, error) {
	if it.e == nil {
		return nil, p.errAt(it.pos, "expected a value, found a condition")
	}
	return it.e, nil
}

// parseOr parses: and { OR and }.
func (p *parser) parseOr() (item, error) {
	return p.parseLogic("or", p.parseAnd)
}

func (p *parser) parseAnd() (item, error) {
	return p.parseLogic("and", p.parseNot)
}

func (p *parser) parseLogic(kw string, sub func() (item, error)) (item, error) {
	left, err := sub()
	if err != nil || !p.isKw(kw) {
		return left, err
	}
	l, err := p.asPred(left)
	if err != nil {
		return item{}, err
	}
	for p.isKw(kw) {
		if err := p.advance(); err != nil {
			return item{}, err
		}
		right, err := sub()
		if err != nil {
			return item{}, err
		}
		r, err := p.asPred(right)
		if err != nil {
			return item{}, err
		}
		l = logic{and: kw == "and", l: l, r: r}
	}
	return item{p: l, pos: left.pos}, nil
}

// parseNot parses: NOT not | comparison.
func (p *parser) parseNot() (item, error) {
	if !p.isKw("not") {
		return p.parseCmp()
	}
	pos := p.tok.pos
	if err := p.enter(pos); err != nil {
		return item{}, err
	}
	defer p.leave()
	if err := p.advance(); err != nil {
		return item{}, err
	}
	it, err := p.parseNot()
	if err != nil {
		return item{}, err
	}
	x, err := p.asPred(it)
	if err != nil {
		return item{}, err
	}
	return item{p: not{x}, pos: pos}, nil
}

// parseCmp parses a value with at most one comparison, IS [NOT] NULL,
// [NOT] IN or [NOT] LIKE after it.
func (p *parser) parseCmp() (item, error) {
	left, err := p.parseAdd()
	if err != nil {
		return item{}, err
	}
	switch {
	case p.tok.kind == tOp:
		switch op := p.tok.text; op {
		case "=", "<>", "!=", "<", "<=", ">", ">=":
			l, err := p.asExpr(left)
			if err != nil {
				return item{}, err
			}
			if err := p.advance(); err != nil {
				return item{}, err
			}
			right, err := p.parseAdd()
			if err != nil {
				return item{}, err
			}
			r, err := p.asExpr(right)
			if err != nil {
				return item{}, err
			}
			return item{p: cmpOp{op: op, l: l, r: r}, pos: left.pos}, nil
		}
	case p.isKw("is"):
		x, err := p.asExpr(left)
		if err != nil {
			return item{}, err
		}
		if err := p.advance(); err != nil {
			return item{}, err
		}
		neg := p.isKw("not")
		if neg {
			if err := p.advance(); err != nil {
				return item{}, err
			}
		}
		if !p.isKw("null") {
			return item{}, p.unexpected("NULL")
		}
		if err := p.advance(); err != nil {
			return item{}, err
		}
		return item{p: isNull{x: x, neg: neg}, pos: left.pos}, nil
	case p.isKw("not"), p.isKw("in"), p.isKw("like"):
		x, err := p.asExpr(left)
		if err != nil {
			return item{}, err
		}
		neg := p.isKw("not")
		if neg {
			if err := p.advance(); err != nil {
				return item{}, err
			}
		}
		switch {
		case p.isKw("in"):
			n, err := p.parseIn(x, neg)
			return item{p: n, pos: left.pos}, err
		case p.isKw("like"):
			n, err := p.parseLike(x, neg)
			return item{p: n, pos: left.pos}, err
		}
		return item{}, p.unexpected("IN or LIKE after NOT")
	}
	return left, nil
}

func (p *parser) parseIn(x expr, neg bool) (pred, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	var list []expr
	for {
		it, err := p.parseAdd()
		if err != nil {
			return nil, err
		}
		e, err := p.asExpr(it)
		if err != nil {
			return nil, err
		}
		list = append(list, e)
		if !p.isOp(",") {
			break
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	return inList{x: x, list: list, neg: neg}, nil
}

func (p *parser) parseLike(x expr, neg bool) (pred, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	patPos := p.tok.pos
	pat, ok, err := p.likeString()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, p.unexpected("a pattern (a string in single quotes or a string parameter) after LIKE")
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	esc := rune(-1)
	if p.isKw("escape") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		s, ok, err := p.likeString()
		if err != nil {
			return nil, err
		}
		if !ok || utf8.RuneCountInString(s) != 1 {
			return nil, p.unexpected("one character in single quotes (or a parameter of one) after ESCAPE")
		}
		esc, _ = utf8.DecodeRuneInString(s)
		if err := p.advance(); err != nil {
			return nil, err
		}
	}
	elems, ok := compileLike(pat, esc)
	if !ok {
		return nil, p.errAt(patPos, "the LIKE pattern ends with its escape character")
	}
	return like{x: x, pat: elems, neg: neg}, nil
}

// likeString returns the text of the current token when it is a string
// literal or a parameter whose value is a string, as a LIKE pattern and its
// escape character may be; ok is false for any other token.
func (p *parser) likeString() (s string, ok bool, err error) {
	switch p.tok.kind {
	case tString:
		return p.tok.text, true, nil
	case tParam:
		v, err := p.param(p.tok)
		if err != nil {
			return "", false, err
		}
		return v.s, v.k == kString, nil
	}
	return "", false, nil
}

// parseAdd parses: mul { (+|-) mul }.
func (p *parser) parseAdd() (item, error) {
	return p.parseArith("+-", p.parseMul)
}

// parseMul parses: unary { (*|/|%) unary }.
func (p *parser) parseMul() (item, error) {
	return p.parseArith("*/%", p.parseUnary)
}

func (p *parser) parseArith(ops string, sub func() (item, error)) (item, error) {
	left, err := sub()
	if err != nil {
		return item{}, err
	}
	isArith := func() bool {
		return p.tok.kind == tOp && len(p.tok.text) == 1 && strings.Contains(ops, p.tok.text)
	}
	if !isArith() {
		return left, nil
	}
	l, err := p.asExpr(left)
	if err != nil {
		return item{}, err
	}
	for isArith() {
		op := p.tok.text[0]
		if err := p.advance(); err != nil {
			return item{}, err
		}
		right, err := sub()
		if err != nil {
			return item{}, err
		}
		r, err := p.asExpr(right)
		if err != nil {
			return item{}, err
		}
		l = arith{op: op, l: l, r: r}
	}
	return item{e: l, pos: left.pos}, nil
}

// parseUnary parses: (+|-) unary | primary.
func (p *parser) parseUnary() (item, error) {
	if !p.isOp("-") && !p.isOp("+") {
		return p.parsePrimary()
	}
	pos, minus := p.tok.pos, p.tok.text == "-"
	if err := p.enter(pos); err != nil {
		return item{}, err
	}
	defer p.leave()
	if err := p.advance(); err != nil {
		return item{}, err
	}
	it, err := p.parseUnary()
	if err != nil {
		return item{}, err
	}
	x, err := p.asExpr(it)
	if err != nil {
		return item{}, err
	}
	if !minus {
		return item{e: x, pos: pos}, nil
	}
	if lit, ok := x.(literal); ok && (lit.v.k == kInt || lit.v.k == kFloat) {
		return item{e: literal{negate{x}.eval(nil)}, pos: pos}, nil
	}
	return item{e: negate{x}, pos: pos}, nil
}

// parsePrimary parses a literal, a property, a function call, EXISTS, or a
// parenthesised expression or condition.
func (p *parser) parsePrimary() (item, error) {
	t := p.tok
	switch t.kind {
	case tOp:
		if t.text != "(" {
			break
		}
		if err := p.enter(t.pos); err != nil {
			return item{}, err
		}
		defer p.leave()
		if err := p.advance(); err != nil {
			return item{}, err
		}
		it, err := p.parseOr()
		if err != nil {
			return item{}, err
		}
		if err := p.expectOp(")"); err != nil {
			return item{}, err
		}
		it.pos = t.pos
		return it, nil
	case tInt:
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return item{}, p.errAt(t.pos, "the integer %s is out of range", t.text)
		}
		return item{e: literal{value{k: kInt, i: n}}, pos: t.pos}, p.advance()
	case tFloat:
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return item{}, p.errAt(t.pos, "the number %s is out of range", t.text)
		}
		return item{e: literal{value{k: kFloat, f: f}}, pos: t.pos}, p.advance()
	case tString:
		return item{e: literal{value{k: kString, s: t.text}}, pos: t.pos}, p.advance()
	case tParam:
		v, err := p.param(t)
		if err != nil {
			return item{}, err
		}
		return item{e: literal{v}, pos: t.pos}, p.advance()
	case tQuotedIdent:
		return item{e: userRef{t.text}, pos: t.pos}, p.advance()
	case tIdent:
		return p.parseName()
	}
	return item{}, p.unexpected("a value")
}

// parseName parses what starts with an identifier: a keyword literal,
// EXISTS, a function call or a property.
func (p *parser) parseName() (item, error) {
	t := p.tok
	lower := strings.ToLower(t.text)
	switch lower {
	case "true", "false":
		return item{e: literal{boolValue(lower == "true")}, pos: t.pos}, p.advance()
	case "null":
		return item{e: literal{null}, pos: t.pos}, p.advance()
	case "exists":
		if err := p.advance(); err != nil {
			return item{}, err
		}
		if err := p.expectOp("("); err != nil {
			return item{}, err
		}
		ref, err := p.parseProperty()
		if err != nil {
			return item{}, err
		}
		if err := p.expectOp(")"); err != nil {
			return item{}, err
		}
		return item{p: exists{ref}, pos: t.pos}, nil
	}
	if keywords[lower] {
		return item{}, p.errAt(t.pos, "unexpected keyword %s; write [%s] for a property of that name", strings.ToUpper(t.text), t.text)
	}
	if p.lex.peekNonSpace() == '(' {
		return p.parseCall()
	}
	ref, err := p.parseProperty()
	return item{e: ref, pos: t.pos}, err
}

// parseCall parses newid() and property(name).
func (p *parser) parseCall() (item, error) {
	t := p.tok
	if err := p.enter(t.pos); err != nil {
		return item{}, err
	}
	defer p.leave()
	if err := p.advance(); err != nil {
		return item{}, err
	}
	if err := p.advance(); err != nil { // (
		return item{}, err
	}
	switch strings.ToLower(t.text) {
	case "newid":
		if err := p.expectOp(")"); err != nil {
			return item{}, err
		}
		return item{e: newID{}, pos: t.pos}, nil
	case "property":
		if p.tok.kind != tString {
			return item{}, p.unexpected("a property name in single quotes")
		}
		name, pos := p.tok.text, p.tok.pos
		if err := p.advance(); err != nil {
			return item{}, err
		}
		if err := p.expectOp(")"); err != nil {
			return item{}, err
		}
		ref, err := resolveName(name)
		if err != nil {
			return item{}, p.errAt(pos, "%s", err.Error())
		}
		return item{e: ref, pos: t.pos}, nil
	}
	return item{}, p.errAt(t.pos, "unknown function %s(); there are newid() and property(name)", t.text)
}

// resolveName resolves the argument of property(): "name", "user.name" or
// "sys.Name".
func resolveName(name string) (expr, error) {
	scope, rest, ok := strings.Cut(name, ".")
	if ok && strings.EqualFold(scope, "sys") {
		sp, ok := sysNames[strings.ToLower(rest)]
		if !ok {
			return nil, errUnknownSys(rest)
		}
		return sysRef{sp}, nil
	}
	if ok && strings.EqualFold(scope, "user") && rest != "" {
		return userRef{rest}, nil
	}
	return userRef{name}, nil
}

type errUnknownSys string

func (e errUnknownSys) Error() string {
	return "sys." + string(e) + " is not a system property"
}

// parseProperty parses [sys.|user.]name, where name may be bracketed or
// quoted.
func (p *parser) parseProperty() (expr, error) {
	t := p.tok
	switch t.kind {
	case tQuotedIdent:
		return userRef{t.text}, p.advance()
	case tIdent:
	default:
		return nil, p.unexpected("a property name")
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if !p.isOp(".") {
		if keywords[strings.ToLower(t.text)] {
			return nil, p.errAt(t.pos, "unexpected keyword %s; write [%s] for a property of that name", strings.ToUpper(t.text), t.text)
		}
		return userRef{t.text}, nil
	}
	scope := strings.ToLower(t.text)
	if scope != "sys" && scope != "user" {
		return nil, p.errAt(t.pos, "unknown scope %q; a property is sys.Name, user.name or name", t.text)
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	n := p.tok
	if n.kind != tIdent && n.kind != tQuotedIdent {
		return nil, p.unexpected("a property name after " + t.text + ".")
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if scope == "user" {
		return userRef{n.text}, nil
	}
	sp, ok := sysNames[strings.ToLower(n.text)]
	if !ok {
		return nil, p.errAt(n.pos, "%s", errUnknownSys(n.text).Error())
	}
	return sysRef{sp}, nil
}
