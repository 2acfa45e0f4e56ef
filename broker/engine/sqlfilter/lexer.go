package sqlfilter

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/peeklock/peeklock/broker"
)

// tokKind is the kind of a token.
type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tQuotedIdent // [name] or "name": never a keyword
	tInt
	tFloat
	tString
	tParam // @name: text is the name with its @
	tOp    // punctuation and operators: ( ) , ; . = <> != < <= > >= + - * / %
)

// token is one lexical token. pos is the 1-based character position of its
// first character.
type token struct {
	kind tokKind
	text string // the identifier, the operator, the literal's source, or the string's value
	pos  int
}

// lexer splits an expression into tokens.
type lexer struct {
	src  string
	off  int // byte offset
	pos  int // 1-based character position of off
	what string
}

func (l *lexer) errAt(pos int, format string, args ...any) *broker.Error {
	return syntaxErr(l.what, l.src, pos, format, args...)
}

// syntaxErr is the CodeInvalid error of a malformed expression.
func syntaxErr(what, src string, pos int, format string, args ...any) *broker.Error {
	e := broker.Errorf(broker.CodeInvalid, format, args...)
	e.Message = what + " " + quoteClip(src) + ": at position " + strconv.Itoa(pos) + ": " + e.Message
	return e
}

func quoteClip(s string) string {
	const max = 80
	if utf8.RuneCountInString(s) > max {
		r := []rune(s)
		s = string(r[:max]) + "…"
	}
	return "\"" + strings.ReplaceAll(s, "\"", "\\\"") + "\""
}

func (l *lexer) peekByte(k int) byte {
	if l.off+k < len(l.src) {
		return l.src[l.off+k]
	}
	return 0
}

func (l *lexer) advance(n int) { // n ASCII bytes
	l.off += n
	l.pos += n
}

func (l *lexer) advanceRune() rune {
	r, size := utf8.DecodeRuneInString(l.src[l.off:])
	l.off += size
	l.pos++
	return r
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// next returns the next token.
func (l *lexer) next() (token, error) {
	for l.off < len(l.src) {
		c := l.src[l.off]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			l.advance(1)
			continue
		}
		break
	}
	start := l.pos
	if l.off >= len(l.src) {
		return token{kind: tEOF, pos: start}, nil
	}
	c := l.src[l.off]
	switch {
	case isLetter(c):
		b := l.off
		for l.off < len(l.src) && (isLetter(l.src[l.off]) || isDigit(l.src[l.off])) {
			l.advance(1)
		}
		return token{kind: tIdent, text: l.src[b:l.off], pos: start}, nil
	case isDigit(c):
		return l.number(start)
	case c == '\'':
		s, err := l.quoted('\'', start, "string")
		return token{kind: tString, text: s, pos: start}, err
	case c == '"':
		s, err := l.quoted('"', start, "quoted name")
		if err == nil && s == "" {
			return token{}, l.errAt(start, "a quoted name is empty")
		}
		return token{kind: tQuotedIdent, text: s, pos: start}, err
	case c == '[':
		s, err := l.quoted(']', start, "bracketed name")
		if err == nil && s == "" {
			return token{}, l.errAt(start, "a bracketed name is empty")
		}
		return token{kind: tQuotedIdent, text: s, pos: start}, err
	}
	two := ""
	if l.off+1 < len(l.src) {
		two = l.src[l.off : l.off+2]
	}
	switch two {
	case "<>", "!=", "<=", ">=":
		l.advance(2)
		return token{kind: tOp, text: two, pos: start}, nil
	}
	switch c {
	case '(', ')', ',', ';', '.', '=', '<', '>', '+', '-', '*', '/', '%':
		l.advance(1)
		return token{kind: tOp, text: string(c), pos: start}, nil
	}
	if c == '@' {
		b := l.off
		l.advance(1)
		for l.off < len(l.src) && (isLetter(l.src[l.off]) || isDigit(l.src[l.off])) {
			l.advance(1)
		}
		if l.off == b+1 {
			return token{}, l.errAt(start, "a parameter needs a name after @ (letters, digits and _)")
		}
		return token{kind: tParam, text: l.src[b:l.off], pos: start}, nil
	}
	r := l.advanceRune()
	return token{}, l.errAt(start, "unexpected character %q", r)
}

// number lexes an integer or decimal literal: digits, an optional fraction
// and an optional exponent.
func (l *lexer) number(start int) (token, error) {
	b := l.off
	kind := tInt
	for isDigit(l.peekByte(0)) {
		l.advance(1)
	}
	if l.peekByte(0) == '.' && isDigit(l.peekByte(1)) {
		kind = tFloat
		l.advance(1)
		for isDigit(l.peekByte(0)) {
			l.advance(1)
		}
	}
	if c := l.peekByte(0); c == 'e' || c == 'E' {
		k := 1
		if s := l.peekByte(1); s == '+' || s == '-' {
			k = 2
		}
		if !isDigit(l.peekByte(k)) {
			return token{}, l.errAt(l.pos, "the exponent of a number needs digits")
		}
		kind = tFloat
		l.advance(k)
		for isDigit(l.peekByte(0)) {
			l.advance(1)
		}
	}
	if isLetter(l.peekByte(0)) {
		return token{}, l.errAt(l.pos, "a number is followed by a letter")
	}
	return token{kind: kind, text: l.src[b:l.off], pos: start}, nil
}

// quoted lexes text up to the closing quote q, where a doubled q stands for
// one.
func (l *lexer) quoted(q byte, start int, what string) (string, error) {
	l.advance(1)
	var sb strings.Builder
	for {
		if l.off >= len(l.src) {
			return "", l.errAt(start, "the %s is not closed", what)
		}
		if l.src[l.off] == q {
			if l.peekByte(1) == q {
				sb.WriteByte(q)
				l.advance(2)
				continue
			}
			l.advance(1)
			return sb.String(), nil
		}
		sb.WriteRune(l.advanceRune())
	}
}

// peekNonSpace returns the next byte after spaces, or 0 at the end.
func (l *lexer) peekNonSpace() byte {
	for i := l.off; i < len(l.src); i++ {
		switch c := l.src[i]; c {
		case ' ', '\t', '\n', '\r':
		default:
			return c
		}
	}
	return 0
}
