package amqpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	sbadmin "github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/amqpserver/entra"
	"github.com/peeklock/peeklock/broker/engine"
	"github.com/peeklock/peeklock/broker/sas"
)

// fakeJWT is an access token of the shape Entra ID issues, with a junk
// signature (nothing can check it offline).
func fakeJWT(aud, oid string, exp time.Time) string {
	h, _ := json.Marshal(map[string]any{"alg": "RS256", "typ": "JWT"})
	p, _ := json.Marshal(map[string]any{"aud": aud, "oid": oid, "exp": exp.Unix(), "nbf": time.Now().Add(-time.Minute).Unix(), "tid": "tenant"})
	return base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(p) + ".c2ln"
}

// tokenCred is an azcore.TokenCredential that hands out one token, as
// DefaultAzureCredential would.
type tokenCred struct{ token string }

func (c tokenCred) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: c.token, ExpiresOn: time.Now().Add(time.Hour)}, nil
}

func entraEnv(t *testing.T) *frontEnv {
	cfg := entra.DefaultConfig()
	cfg.Rights = map[string]sas.Rights{"sender-oid": sas.Send}
	env := newFrontEnv(t, engine.Options{}, Options{EntraID: entra.NewValidator(cfg, nil)})
	env.queue("q", broker.EntitySettings{})
	return env
}

func entraClient(t *testing.T, env *frontEnv, token string) *azservicebus.Client {
	t.Helper()
	c, err := azservicebus.NewClient("localhost:"+env.port, tokenCred{token}, &azservicebus.ClientOptions{
		TLSConfig:    env.tlsConfig(),
		RetryOptions: azservicebus.RetryOptions{MaxRetries: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// TestSDKEntraID: with EntraID, the official SDK authenticates with a
// token credential (put-token type jwt) and its admin client with the bare
// token; roles give rights by object id.
func TestSDKEntraID(t *testing.T) {
	env := entraEnv(t)
	owner := fakeJWT(entra.Audience, "owner-oid", time.Now().Add(time.Hour))
	sendReceive(t, entraClient(t, env, owner), "q", "as the owner")

	ac, err := sbadmin.NewClient("localhost:"+env.port, tokenCred{owner}, &sbadmin.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: env.httpClient(), Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 30*time.Second)
	if _, err := ac.CreateQueue(ctx, "made-by-entra", nil); err != nil {
		t.Fatalf("admin CreateQueue with an Entra ID token: %v", err)
	}

	// A Sender may send and not receive.
	sender := entraClient(t, env, fakeJWT(entra.Audience, "sender-oid", time.Now().Add(time.Hour)))
	snd, err := sender.NewSender("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := snd.SendMessage(ctx, &azservicebus.Message{Body: []byte("x")}, nil); err != nil {
		t.Fatalf("send as a Sender: %v", err)
	}
	rcv, err := sender.NewReceiverForQueue("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = rcv.ReceiveMessages(ctx, 1, nil)
	var sbErr *azservicebus.Error
	if !errors.As(err, &sbErr) || sbErr.Code != azservicebus.CodeUnauthorizedAccess || !strings.Contains(err.Error(), "'Listen' claim(s) are required") {
		t.Fatalf("receive as a Sender: %v, want unauthorized for Listen", err)
	}
	if _, err := ac.GetQueue(ctx, "q", nil); err != nil {
		t.Fatalf("GetQueue as the owner: %v", err)
	}

	// A token for another audience is refused.
	other := entraClient(t, env, fakeJWT("https://storage.azure.com", "owner-oid", time.Now().Add(time.Hour)))
	s2, err := other.NewSender("q", nil)
	if err == nil {
		err = s2.SendMessage(ctx, &azservicebus.Message{Body: []byte("x")}, nil)
	}
	if !errors.As(err, &sbErr) || sbErr.Code != azservicebus.CodeUnauthorizedAccess || !strings.Contains(err.Error(), "audience") {
		t.Fatalf("send with a storage token: %v, want unauthorized naming the audience", err)
	}
}

// TestAdminBearerToken: "Authorization: Bearer TOKEN" works as the bare
// token does; an expired token is refused.
func TestAdminBearerToken(t *testing.T) {
	env := entraEnv(t)
	hc := env.httpClient()
	for _, tc := range []struct {
		header string
		status int
	}{
		{"Bearer " + fakeJWT(entra.Audience, "owner-oid", time.Now().Add(time.Hour)), 200},
		{fakeJWT("https://localhost", "owner-oid", time.Now().Add(time.Hour)), 200},
		{"Bearer " + fakeJWT(entra.Audience, "owner-oid", time.Now().Add(-time.Hour)), 401},
		{"Bearer " + fakeJWT(entra.Audience, "sender-oid", time.Now().Add(time.Hour)), 401}, // no Manage
		{"Bearer opaque-development-token", 200},                                            // the default role
		{"Basic dXNlcjpwYXNz", 401},                                                         // not a token
	} {
		req, _ := http.NewRequest("GET", "https://localhost:"+env.port+"/$Resources/Queues", nil)
		req.Header.Set("Authorization", tc.header)
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.status {
			t.Errorf("%.40s…: status %d, want %d", tc.header, res.StatusCode, tc.status)
		}
	}
}

// TestEntraIDOffRefusesJWT: without EntraID a JWT is refused, as before.
func TestEntraIDOffRefusesJWT(t *testing.T) {
	env := newFrontEnv(t, engine.Options{}, Options{})
	env.queue("q", broker.EntitySettings{})
	c := entraClient(t, env, fakeJWT(entra.Audience, "owner-oid", time.Now().Add(time.Hour)))
	ctx := testCtx(t, 20*time.Second)
	s, err := c.NewSender("q", nil)
	if err == nil {
		err = s.SendMessage(ctx, &azservicebus.Message{Body: []byte("x")}, nil)
	}
	var sbErr *azservicebus.Error
	if !errors.As(err, &sbErr) || sbErr.Code != azservicebus.CodeUnauthorizedAccess {
		t.Fatalf("send with a JWT and EntraID off: %v, want unauthorized", err)
	}
}
