package sas

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strconv"
	"time"
)

// Sign returns a token for audience signed with the named key, valid until
// expiry (truncated to the second). The audience is URL-encoded with
// url.QueryEscape, as the Go SDK does (without lower-casing it).
func Sign(audience, keyName, key string, expiry time.Time) string {
	sr := url.QueryEscape(audience)
	se := strconv.FormatInt(expiry.Unix(), 10)
	sig := base64.StdEncoding.EncodeToString(mac([]byte(key), sr+"\n"+se))
	return Prefix + " sr=" + sr + "&sig=" + url.QueryEscape(sig) + "&se=" + se + "&skn=" + url.QueryEscape(keyName)
}

// mac returns HMAC-SHA256(key, s).
func mac(key []byte, s string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(s)) // a hash never fails to write
	return h.Sum(nil)
}
