package sas

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
)

var t0 = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

const aud = "sb://localhost/orders"

// sdkToken builds a token the way the Go SDK does (internal/sas): the
// audience URL-encoded and then lower-cased, the signature URL-encoded. It
// computes the HMAC on its own so that it checks Sign independently.
func sdkToken(audience, keyName, key string, expiry int64) string {
	return independentToken(strings.ToLower(url.QueryEscape(audience)), keyName, key, expiry)
}

// independentToken signs sr (already encoded) without using this package.
func independentToken(sr, keyName, key string, expiry int64) string {
	se := strconv.FormatInt(expiry, 10)
	h := hmac.New(sha256.New, []byte(key))
	h.Write([]byte(sr + "\n" + se))
	sig := url.QueryEscape(base64.StdEncoding.EncodeToString(h.Sum(nil)))
	return "SharedAccessSignature sr=" + sr + "&sig=" + sig + "&se=" + se + "&skn=" + keyName
}

func TestSignMatchesIndependentComputation(t *testing.T) {
	got := Sign(aud, "RootManageSharedAccessKey", "SAS_KEY_VALUE", t0.Add(time.Hour))
	want := independentToken(url.QueryEscape(aud), "RootManageSharedAccessKey", "SAS_KEY_VALUE", t0.Add(time.Hour).Unix())
	if got != want {
		t.Fatalf("Sign:\n got %s\nwant %s", got, want)
	}
}

func TestValidate(t *testing.T) {
	keys := map[string]string{"RootManageSharedAccessKey": "SAS_KEY_VALUE", "listen": "other-key"}
	exp := t0.Add(time.Hour)
	good := Sign(aud, "RootManageSharedAccessKey", "SAS_KEY_VALUE", exp)
	fields := strings.TrimPrefix(good, "SharedAccessSignature ")
	parts := strings.Split(fields, "&") // sr, sig, se, skn
	tests := []struct {
		name    string
		token   string
		now     time.Time
		wantErr string // "" means valid
		wantKey string
	}{
		{name: "good", token: good, now: t0, wantKey: "RootManageSharedAccessKey"},
		{name: "good second key", token: Sign(aud, "listen", "other-key", exp), now: t0, wantKey: "listen"},
		{name: "sdk form, lower-cased audience", token: sdkToken("sb://LocalHost/Orders", "RootManageSharedAccessKey", "SAS_KEY_VALUE", exp.Unix()), now: t0, wantKey: "RootManageSharedAccessKey"},
		{name: "fields in another order", token: "SharedAccessSignature " + parts[3] + "&" + parts[2] + "&" + parts[0] + "&" + parts[1], now: t0, wantKey: "RootManageSharedAccessKey"},
		{name: "one second before expiry", token: good, now: exp.Add(-time.Second), wantKey: "RootManageSharedAccessKey"},
		{name: "at expiry", token: good, now: exp, wantErr: "ExpiredToken: The token is expired. Expiration time: '2025-03-04 06:06:07Z'. Time here: '2025-03-04 06:06:07Z'."},
		{name: "expired", token: good, now: exp.Add(time.Minute), wantErr: "ExpiredToken: The token is expired. Expiration time: '2025-03-04 06:06:07Z'. Time here: '2025-03-04 06:07:07Z'."},
		{name: "wrong key", token: Sign(aud, "RootManageSharedAccessKey", "not-the-key", exp), now: t0, wantErr: `the signature does not match key "RootManageSharedAccessKey"`},
		{name: "tampered audience", token: strings.Replace(good, "orders", "orderz", 1), now: t0, wantErr: `the signature does not match key "RootManageSharedAccessKey"`},
		{name: "tampered expiry", token: strings.Replace(good, "se="+strconv.FormatInt(exp.Unix(), 10), "se="+strconv.FormatInt(exp.Unix()+1, 10), 1), now: t0, wantErr: `the signature does not match key "RootManageSharedAccessKey"`},
		{name: "unknown key name", token: Sign(aud, "nobody", "SAS_KEY_VALUE", exp), now: t0, wantErr: `unknown key name "nobody"`},
		{name: "key name case matters", token: Sign(aud, "rootmanagesharedaccesskey", "SAS_KEY_VALUE", exp), now: t0, wantErr: `unknown key name "rootmanagesharedaccesskey"`},
		{name: "empty", token: "", now: t0, wantErr: `malformed shared access signature: it does not start with "SharedAccessSignature "`},
		{name: "bearer token", token: "Bearer eyJ0eXAi", now: t0, wantErr: `malformed shared access signature: it does not start with "SharedAccessSignature "`},
		{name: "no fields", token: "SharedAccessSignature ", now: t0, wantErr: `malformed shared access signature: it has no fields after "SharedAccessSignature"`},
		{name: "no space", token: "SharedAccessSignaturesr=a&sig=b&se=1&skn=k", now: t0, wantErr: `malformed shared access signature: a space must follow "SharedAccessSignature"`},
		{name: "missing sig", token: "SharedAccessSignature " + parts[0] + "&" + parts[2] + "&" + parts[3], now: t0, wantErr: "malformed shared access signature: the field sig is missing or empty"},
		{name: "missing skn", token: "SharedAccessSignature " + parts[0] + "&" + parts[1] + "&" + parts[2], now: t0, wantErr: "malformed shared access signature: the field skn is missing or empty"},
		{name: "empty sr", token: "SharedAccessSignature sr=&" + parts[1] + "&" + parts[2] + "&" + parts[3], now: t0, wantErr: "malformed shared access signature: the field sr is missing or empty"},
		{name: "duplicate se", token: good + "&se=1", now: t0, wantErr: "malformed shared access signature: the field se appears twice"},
		{name: "field without =", token: good + "&junk", now: t0, wantErr: `malformed shared access signature: the field "junk" has no '='`},
		{name: "signature not base64", token: "SharedAccessSignature sr=a&sig=!!!&se=1&skn=k", now: t0, wantErr: "malformed shared access signature: the signature (sig) is not base64"},
		{name: "signature too short", token: "SharedAccessSignature sr=a&sig=AAAA&se=1&skn=k", now: t0, wantErr: "malformed shared access signature: the signature (sig) is 3 bytes long, not the 32 of an HMAC-SHA256"},
		{name: "expiry not a number", token: "SharedAccessSignature " + parts[0] + "&" + parts[1] + "&se=tomorrow&" + parts[3], now: t0, wantErr: `malformed shared access signature: the expiry (se) "tomorrow" is not a unix time in seconds`},
		{name: "negative expiry", token: "SharedAccessSignature " + parts[0] + "&" + parts[1] + "&se=-5&" + parts[3], now: t0, wantErr: `malformed shared access signature: the expiry (se) "-5" is not a unix time in seconds`},
		{name: "bad escape in sr", token: "SharedAccessSignature sr=%zz&" + parts[1] + "&" + parts[2] + "&" + parts[3], now: t0, wantErr: `malformed shared access signature: the audience (sr) is not URL-encoded properly: invalid URL escape "%zz"`},
		{name: "too long", token: "SharedAccessSignature sr=" + strings.Repeat("a", 5000), now: t0, wantErr: "malformed shared access signature: it is 5025 bytes long; at most 4096 are allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := NewValidator(keys, clockwork.NewFakeClockAt(tc.now))
			tok, err := v.Validate(tc.token)
			if tc.wantErr != "" {
				checkUnauthorized(t, err, tc.wantErr)
				if strings.Contains(err.Error(), "SAS_KEY_VALUE") || strings.Contains(err.Error(), "other-key") {
					t.Fatalf("error %q echoes a key", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if tok.KeyName != tc.wantKey {
				t.Fatalf("KeyName = %q, want %q", tok.KeyName, tc.wantKey)
			}
			if !tok.Expiry.Equal(exp) {
				t.Fatalf("Expiry = %v, want %v", tok.Expiry, exp)
			}
			if !strings.EqualFold(tok.Audience, aud) {
				t.Fatalf("Audience = %q, want %q (any case)", tok.Audience, aud)
			}
		})
	}
}

func checkUnauthorized(t *testing.T, err error, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", msg)
	}
	var be *broker.Error
	if !errors.As(err, &be) {
		t.Fatalf("error %T %v is not a *broker.Error", err, err)
	}
	if !errors.Is(err, broker.ErrUnauthorized) {
		t.Fatalf("code = %v, want unauthorized", be.Code)
	}
	if be.Message != msg {
		t.Fatalf("message:\n got %s\nwant %s", be.Message, msg)
	}
}

func TestAuthorize(t *testing.T) {
	v := NewValidator(nil, clockwork.NewFakeClockAt(t0))
	exp := t0.Add(time.Minute)
	tests := []struct {
		audience, resource string
		wantErr            string
	}{
		{"sb://localhost/orders", "sb://localhost/orders/$management", ""},
		{"amqp://localhost:5672/orders", "https://localhost:5300/orders", ""},
		{"sb://localhost/", "sb://localhost/events/Subscriptions/audit", ""},
		{"sb://localhost/orders", "sb://localhost/orders2", `the token for "sb://localhost/orders" does not cover "sb://localhost/orders2"`},
		{"sb://otherhost/orders", "sb://localhost/orders", `the token for "sb://otherhost/orders" does not cover "sb://localhost/orders"`},
	}
	for _, tc := range tests {
		t.Run(tc.audience+" "+tc.resource, func(t *testing.T) {
			tok, err := v.Authorize(Sign(tc.audience, DefaultKeyName, DefaultKey, exp), tc.resource)
			if tc.wantErr != "" {
				checkUnauthorized(t, err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatalf("Authorize: %v", err)
			}
			if tok.Audience != tc.audience {
				t.Fatalf("Audience = %q, want %q", tok.Audience, tc.audience)
			}
		})
	}
}

func TestCovers(t *testing.T) {
	tests := []struct {
		audience, resource string
		want               bool
	}{
		{"sb://host/queue", "sb://host/queue", true},
		{"sb://host/queue", "sb://host/queue/$management", true},
		{"sb://host/queue", "sb://host/queue/$DeadLetterQueue", true},
		{"sb://host/queue", "sb://host/queue/$DeadLetterQueue/$management", true},
		{"sb://host/queue/", "sb://host/queue", true},
		{"sb://host/queue", "sb://host/queue/", true},
		{"sb://host", "sb://host/anything/at/all", true},
		{"sb://host/", "sb://host/q", true},
		{"SB://HOST/Queue", "sb://host/QUEUE", true},
		{"https://host/queue?api-version=2024-05", "sb://host/queue", true},
		{"http://host:5300/queue", "amqp://host:5672/queue", true},
		{"amqps://host/topic/Subscriptions/s1", "sb://host/topic/subscriptions/s1/$management", true},
		{"host/queue", "sb://host/queue", true},
		{"sb://host/queue%2Fx", "sb://host/queue/x", true},
		{"sb://host/queue", "sb://host/queue2", false},
		{"sb://host/queue2", "sb://host/queue", false},
		{"sb://host/queue/$management", "sb://host/queue", false},
		{"sb://host/topic", "sb://host/other/Subscriptions/s", false},
		{"sb://host/queue", "sb://other/queue", false},
		{"sb://host.example/queue", "sb://host/queue", false},
		{"", "sb://host/queue", false},
		{"sb:///queue", "sb:///queue", false},
	}
	for _, tc := range tests {
		if got := Covers(tc.audience, tc.resource); got != tc.want {
			t.Errorf("Covers(%q, %q) = %v, want %v", tc.audience, tc.resource, got, tc.want)
		}
	}
}

func TestDefaultKeys(t *testing.T) {
	v := NewValidator(map[string]string{}, clockwork.NewFakeClockAt(t0))
	tok, err := v.Validate(Sign(aud, "RootManageSharedAccessKey", "SAS_KEY_VALUE", t0.Add(time.Second)))
	if err != nil {
		t.Fatalf("Validate with the default key: %v", err)
	}
	if tok.KeyName != DefaultKeyName {
		t.Fatalf("KeyName = %q", tok.KeyName)
	}
}

// TestRealClock uses the real clock: a fresh token is valid, one that
// expired a second ago is not.
func TestRealClock(t *testing.T) {
	v := NewValidator(nil, nil)
	if _, err := v.Validate(Sign(aud, DefaultKeyName, DefaultKey, time.Now().Add(time.Hour))); err != nil {
		t.Fatalf("fresh token: %v", err)
	}
	_, err := v.Validate(Sign(aud, DefaultKeyName, DefaultKey, time.Now().Add(-time.Second)))
	if !errors.Is(err, broker.ErrUnauthorized) || !strings.HasPrefix(err.Error(), "unauthorized: ExpiredToken: The token is expired. Expiration time: ") {
		t.Fatalf("expired token: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(Sign(aud, DefaultKeyName, DefaultKey, t0))
	f.Add("SharedAccessSignature sr=a&sig=b&se=1&skn=k")
	f.Add("SharedAccessSignature &&&==")
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := Parse(s)
		if err != nil {
			if !errors.Is(err, broker.ErrUnauthorized) {
				t.Fatalf("error %v is not unauthorized", err)
			}
			return
		}
		if tok.KeyName == "" || tok.Audience == "" || len(tok.signature) != signatureSize {
			t.Fatalf("accepted an incomplete token: %+v", tok)
		}
	})
}
