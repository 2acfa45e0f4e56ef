package entra

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sas"
	"github.com/peeklock/peeklock/internal/config"
)

var now = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// jwt builds an unsigned-looking token with claims (the signature part is
// junk: nothing checks it).
func jwt(claims map[string]any) string {
	h, _ := json.Marshal(map[string]any{"alg": "RS256", "typ": "JWT", "kid": "x"})
	p, _ := json.Marshal(claims)
	return base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(p) + ".c2lnbmF0dXJl"
}

func valid(extra map[string]any) map[string]any {
	c := map[string]any{"aud": Audience, "exp": now.Add(time.Hour).Unix(), "nbf": now.Add(-time.Minute).Unix(), "oid": "OID-1", "tid": "t"}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return c
}

func TestValidate(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Rights = map[string]sas.Rights{"oid-send": sas.Send, "app-listen": sas.Listen}
	v := NewValidator(cfg, clockwork.NewFakeClockAt(now))
	hosts := []string{"localhost:5671", "sbemulatorns.servicebus.windows.net"}
	tests := []struct {
		name    string
		token   string
		rights  sas.Rights
		subject string
		err     string
	}{
		{name: "Service Bus audience", token: jwt(valid(nil)), rights: sas.AllRights, subject: "OID-1"},
		{name: "audience with a slash", token: jwt(valid(map[string]any{"aud": Audience + "/"})), rights: sas.AllRights, subject: "OID-1"},
		{name: "audience list", token: jwt(valid(map[string]any{"aud": []string{"api://x", Audience}})), rights: sas.AllRights, subject: "OID-1"},
		{name: "namespace audience", token: jwt(valid(map[string]any{"aud": "https://LocalHost/"})), rights: sas.AllRights, subject: "OID-1"},
		{name: "namespace audience, Azure host", token: jwt(valid(map[string]any{"aud": "https://sbemulatorns.servicebus.windows.net"})), rights: sas.AllRights, subject: "OID-1"},
		{name: "role by object id", token: jwt(valid(map[string]any{"oid": "OID-SEND"})), rights: sas.Send, subject: "OID-SEND"},
		{name: "role by app id", token: jwt(valid(map[string]any{"oid": "someone", "appid": "app-listen"})), rights: sas.Listen, subject: "app-listen"},
		{name: "role by azp", token: jwt(valid(map[string]any{"oid": nil, "azp": "app-listen"})), rights: sas.Listen, subject: "app-listen"},
		{name: "expired inside the skew", token: jwt(valid(map[string]any{"exp": now.Add(-4 * time.Minute).Unix()})), rights: sas.AllRights, subject: "OID-1"},
		{name: "not yet valid inside the skew", token: jwt(valid(map[string]any{"nbf": now.Add(4 * time.Minute).Unix()})), rights: sas.AllRights, subject: "OID-1"},
		{name: "other audience", token: jwt(valid(map[string]any{"aud": "https://storage.azure.com"})), err: `audience "https://storage.azure.com" is not Service Bus's`},
		{name: "other host", token: jwt(valid(map[string]any{"aud": "https://elsewhere"})), err: "is not Service Bus's"},
		{name: "expired", token: jwt(valid(map[string]any{"exp": now.Add(-6 * time.Minute).Unix()})), err: "the token expired at 2026-03-04T05:00:07Z"},
		{name: "no exp", token: jwt(valid(map[string]any{"exp": nil})), err: "no expiry"},
		{name: "not yet valid", token: jwt(valid(map[string]any{"nbf": now.Add(6 * time.Minute).Unix()})), err: "not valid before 2026-03-04T05:12:07Z"},
		{name: "claims not JSON", token: "eyJhbGciOiJub25lIn0.bm90IGpzb24.x", err: "claims are not base64url JSON"},
		{name: "empty", token: " ", err: "the token is empty"},
		{name: "too long", token: strings.Repeat("a", maxTokenLen+1), err: "bytes long"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, err := v.Validate(tc.token, hosts, time.Time{})
			if tc.err != "" {
				if !errors.Is(err, broker.ErrUnauthorized) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want unauthorized with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if id.Rights != tc.rights || id.Subject != tc.subject || id.Opaque {
				t.Fatalf("identity %+v, want rights %v subject %s", id, tc.rights, tc.subject)
			}
		})
	}
	// The grant lasts until exp plus the skew.
	id, _ := v.Validate(jwt(valid(nil)), hosts, time.Time{})
	if want := now.Add(time.Hour + ClockSkew); !id.Expires.Equal(want) {
		t.Errorf("Expires = %v, want %v", id.Expires, want)
	}
}

func TestOpaqueTokens(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DefaultRights = sas.Send
	v := NewValidator(cfg, clockwork.NewFakeClockAt(now))
	id, err := v.Validate("fake-entra-token-for-peeklock-suite", nil, now.Add(10*time.Minute))
	if err != nil || !id.Opaque || id.Rights != sas.Send || !id.Expires.Equal(now.Add(10*time.Minute)) || id.Subject != "" {
		t.Fatalf("opaque token with an expiry: %+v, %v", id, err)
	}
	id, _ = v.Validate("opaque", nil, time.Time{})
	if !id.Expires.Equal(now.Add(OpaqueLifetime)) {
		t.Errorf("opaque token without an expiry lasts until %v", id.Expires)
	}
	// A past hint is ignored rather than making an expired grant.
	if id, _ = v.Validate("opaque", nil, now.Add(-time.Minute)); !id.Expires.Equal(now.Add(OpaqueLifetime)) {
		t.Errorf("opaque token with a past expiry lasts until %v", id.Expires)
	}
	cfg.AcceptOpaque = false
	if _, err := NewValidator(cfg, clockwork.NewFakeClockAt(now)).Validate("opaque", nil, time.Time{}); !errors.Is(err, broker.ErrUnauthorized) {
		t.Fatalf("opaque token refused by the config: %v", err)
	}
}

// parseConfig reads the [entra_id] section of a config file's text as
// peeklock serve --entra-id does: config.Parse, then ConfigFrom.
func parseConfig(text string) (Config, error) {
	f, err := config.Parse("config.toml", []byte(text))
	if err != nil {
		return Config{}, err
	}
	if f.EntraID == nil {
		return ConfigFrom(nil)
	}
	return ConfigFrom(&Section{DefaultRole: f.EntraID.DefaultRole, AcceptOpaque: f.EntraID.AcceptOpaque, Roles: f.EntraID.Roles})
}

func TestConfigFrom(t *testing.T) {
	cfg, err := parseConfig(`
theme = "dark"
[ssh]
addr = ":2222"
[entra_id]
default_role = "Azure Service Bus Data Receiver"
accept_opaque_tokens = false
[entra_id.roles]
"AAA-oid" = "Sender"
"bbb-app" = ["sender", "RECEIVER"]
"ccc" = "none"
`)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{DefaultRights: sas.Listen, AcceptOpaque: false,
		Rights: map[string]sas.Rights{"aaa-oid": sas.Send, "bbb-app": sas.Send | sas.Listen, "ccc": 0}}
	if cfg.DefaultRights != want.DefaultRights || cfg.AcceptOpaque != want.AcceptOpaque || len(cfg.Rights) != 3 {
		t.Fatalf("config %+v, want %+v", cfg, want)
	}
	for k, r := range want.Rights {
		if cfg.Rights[k] != r {
			t.Errorf("rights of %s = %v, want %v", k, cfg.Rights[k], r)
		}
	}
	if cfg, err := parseConfig(`theme = "dark"`); err != nil || cfg.DefaultRights != sas.AllRights || !cfg.AcceptOpaque {
		t.Errorf("no section: %+v, %v; want the defaults", cfg, err)
	}
	for in, msg := range map[string]string{
		"[entra_id]\ndefault_role = \"Admin\"":      `entra_id: default_role: unknown role "Admin"; the roles are Owner, Sender, Receiver and None`,
		"[entra_id.roles]\n\"x\" = \"Writer\"":      `entra_id: roles: "x": unknown role "Writer"`,
		"[entra_id.roles]\n\"x\" = 3":               `entra_id: roles: "x": want a role or a list of roles`,
		"[entra_id.roles]\n\"x\" = [\"Sender\", 3]": `entra_id: roles: "x": a role is a string`,
	} {
		_, err := parseConfig(in)
		if !errors.Is(err, broker.ErrInvalid) || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want %q", in, err, msg)
		}
	}
}
