package sas

import (
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// Prefix starts every shared access signature token.
const Prefix = "SharedAccessSignature"

// signatureSize is the size of an HMAC-SHA256.
const signatureSize = 32

// maxTokenLength bounds the tokens Parse accepts; real ones are a few
// hundred bytes.
const maxTokenLength = 4096

// Token is a parsed shared access signature. Parse only checks its syntax;
// Validator.Validate checks the signature and the expiry.
type Token struct {
	// Audience is the resource URI the token was issued for (sr, decoded).
	Audience string
	// Expiry is the instant the token stops being valid (se).
	Expiry time.Time
	// KeyName names the key that signed the token (skn, decoded).
	KeyName string
	// Rights are the claims of that key, set by Validator.Validate.
	Rights Rights

	signed    string // the string to sign: sr and se as they appear in the token
	signature []byte // sig, decoded
}

// Parse parses a token of the form
//
//	SharedAccessSignature sr=<audience>&sig=<signature>&se=<expiry>&skn=<key name>
//
// with its fields in any order. Field names match without regard to case;
// unknown fields are ignored. A malformed token is a *broker.Error with
// CodeUnauthorized whose message names the faulty field.
func Parse(token string) (*Token, error) {
	if len(token) > maxTokenLength {
		return nil, malformed("it is %d bytes long; at most %d are allowed", len(token), maxTokenLength)
	}
	s := strings.TrimSpace(token)
	if len(s) < len(Prefix) || !strings.EqualFold(s[:len(Prefix)], Prefix) {
		return nil, malformed("it does not start with %q", Prefix+" ")
	}
	rest := s[len(Prefix):]
	fields := strings.TrimLeft(rest, " ")
	if fields == "" {
		return nil, malformed("it has no fields after %q", Prefix)
	}
	if len(fields) == len(rest) {
		return nil, malformed("a space must follow %q", Prefix)
	}
	var raw [4]string // sr, sig, se, skn as written
	var seen [4]bool
	names := [4]string{"sr", "sig", "se", "skn"}
	for _, f := range strings.Split(fields, "&") {
		name, value, ok := strings.Cut(f, "=")
		if !ok {
			return nil, malformed("the field %q has no '='", clip(f))
		}
		for i, n := range names {
			if strings.EqualFold(name, n) {
				if seen[i] {
					return nil, malformed("the field %s appears twice", n)
				}
				seen[i], raw[i] = true, value
			}
		}
	}
	for i, n := range names {
		if !seen[i] || raw[i] == "" {
			return nil, malformed("the field %s is missing or empty", n)
		}
	}
	t := &Token{signed: raw[0] + "\n" + raw[2]}
	var err error
	if t.Audience, err = url.QueryUnescape(raw[0]); err != nil {
		return nil, malformed("the audience (sr) is not URL-encoded properly: %v", err)
	}
	sig, err := url.QueryUnescape(raw[1])
	if err != nil {
		return nil, malformed("the signature (sig) is not URL-encoded properly: %v", err)
	}
	if t.signature, err = base64.StdEncoding.DecodeString(sig); err != nil {
		return nil, malformed("the signature (sig) is not base64")
	}
	if len(t.signature) != signatureSize {
		return nil, malformed("the signature (sig) is %d bytes long, not the %d of an HMAC-SHA256", len(t.signature), signatureSize)
	}
	se, err := strconv.ParseInt(raw[2], 10, 64)
	if err != nil || se < 0 {
		return nil, malformed("the expiry (se) %q is not a unix time in seconds", clip(raw[2]))
	}
	t.Expiry = time.Unix(se, 0).UTC()
	if t.KeyName, err = url.QueryUnescape(raw[3]); err != nil {
		return nil, malformed("the key name (skn) is not URL-encoded properly: %v", err)
	}
	return t, nil
}

// malformed builds the error of a token that cannot be parsed.
func malformed(format string, args ...any) *broker.Error {
	e := broker.Errorf(broker.CodeUnauthorized, format, args...)
	e.Message = "malformed shared access signature: " + e.Message
	return e
}

// clip shortens text from a token for an error message.
func clip(s string) string {
	const max = 40
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
