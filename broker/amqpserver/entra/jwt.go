package entra

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/peeklock/peeklock/broker"
)

// maxTokenLen bounds a token; Entra ID tokens are a few kilobytes.
const maxTokenLen = 16 << 10

// claims are the parts of an access token this package reads.
type claims struct {
	Audience  audience `json:"aud"`
	Expires   *float64 `json:"exp"`
	NotBefore *float64 `json:"nbf"`
	ObjectID  string   `json:"oid"`
	AppID     string   `json:"appid"`
	AZP       string   `json:"azp"`
	TenantID  string   `json:"tid"`
}

// audience is the aud claim: one string or a list of them.
type audience []string

func (a *audience) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*a = audience{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*a = many
	return nil
}

// looksLikeJWT reports whether token has the shape of a JWS compact
// serialization: three base64url parts, the first a JSON object.
func looksLikeJWT(token string) bool {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return false
	}
	h, err := decodeSegment(parts[0])
	return err == nil && len(h) > 0 && h[0] == '{'
}

// parseJWT returns the claims of a JWT without checking its signature.
func parseJWT(token string) (claims, error) {
	var c claims
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return c, unauthorized("the token is not a JWT (it has %d parts, not 3)", len(parts))
	}
	var header struct {
		Alg string `json:"alg"`
	}
	h, err := decodeSegment(parts[0])
	if err == nil {
		err = json.Unmarshal(h, &header)
	}
	if err != nil {
		return c, unauthorized("the token's header is not base64url JSON")
	}
	p, err := decodeSegment(parts[1])
	if err == nil {
		err = json.Unmarshal(p, &c)
	}
	if err != nil {
		return c, unauthorized("the token's claims are not base64url JSON")
	}
	return c, nil
}

// decodeSegment decodes base64url with or without padding.
func decodeSegment(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

// unixTime converts a NumericDate.
func unixTime(f float64) time.Time {
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9)).UTC()
}

func unauthorized(format string, args ...any) *broker.Error {
	e := broker.Errorf(broker.CodeUnauthorized, format, args...)
	e.Message = "Entra ID token refused: " + e.Message
	return e
}
