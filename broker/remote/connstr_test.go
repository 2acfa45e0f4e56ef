package remote

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sas"
)

const (
	secretKey = "c2VjcmV0LWtleS12YWx1ZQ=="
	secretPwd = "hunter2-pass"
)

var readySAS = sas.Sign("sb://ns.servicebus.windows.net/q1", "listen", secretKey, time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))

func TestParseConnectionStringGood(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     ConnectionString
		redacted string
	}{
		{
			name: "portal string",
			in:   "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=" + secretKey,
			want: ConnectionString{Kind: KindAzure, Host: "ns.servicebus.windows.net", Port: 5671, TLS: true,
				KeyName: "RootManageSharedAccessKey", Key: secretKey},
			redacted: "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=<redacted>",
		},
		{
			name: "keys in any case and order, trailing semicolons, spaces, entity path",
			in:   " sharedaccesskey=" + secretKey + " ; ENTITYPATH=orders;endpoint=sb://ns.servicebus.windows.net;SharedAccessKeyName=send;; ",
			want: ConnectionString{Kind: KindAzure, Host: "ns.servicebus.windows.net", Port: 5671, TLS: true,
				KeyName: "send", Key: secretKey, EntityPath: "orders"},
			redacted: "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=<redacted>;EntityPath=orders",
		},
		{
			name: "emulator",
			in:   "Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;",
			want: ConnectionString{Kind: KindEmulator, Host: "localhost", Port: 5672,
				KeyName: "RootManageSharedAccessKey", Key: "SAS_KEY_VALUE"},
			redacted: "Endpoint=sb://localhost/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=<redacted>;UseDevelopmentEmulator=true",
		},
		{
			name:     "emulator with port, TRUE in capitals",
			in:       "Endpoint=sb://127.0.0.1:35672/;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=TRUE",
			want:     ConnectionString{Kind: KindEmulator, Host: "127.0.0.1", Port: 35672, PortGiven: true, KeyName: "k", Key: "v"},
			redacted: "Endpoint=sb://127.0.0.1:35672/;SharedAccessKeyName=k;SharedAccessKey=<redacted>;UseDevelopmentEmulator=true",
		},
		{
			name: "quoted values with ; and doubled quotes",
			in:   `Endpoint="sb://ns.servicebus.windows.net/";SharedAccessKeyName='a''b';SharedAccessKey="x;y""z"`,
			want: ConnectionString{Kind: KindAzure, Host: "ns.servicebus.windows.net", Port: 5671, TLS: true,
				KeyName: "a'b", Key: `x;y"z`},
			redacted: "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=a'b;SharedAccessKey=<redacted>",
		},
		{
			name: "ready-made signature",
			in:   "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessSignature=" + readySAS + ";EntityPath=q1",
			want: ConnectionString{Kind: KindAzure, Host: "ns.servicebus.windows.net", Port: 5671, TLS: true,
				KeyName: "listen", SharedAccessSignature: readySAS, EntityPath: "q1"},
			redacted: "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=listen;SharedAccessSignature=<redacted>;EntityPath=q1",
		},
		{
			name: "subscription entity path, transport type",
			in:   "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=v;EntityPath=/events/Subscriptions/audit/;TransportType=Amqp",
			want: ConnectionString{Kind: KindAzure, Host: "ns.servicebus.windows.net", Port: 5671, TLS: true,
				KeyName: "k", Key: "v", EntityPath: "events/Subscriptions/audit"},
			redacted: "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=<redacted>;EntityPath=events/Subscriptions/audit",
		},
		{
			name: "AMQP over WebSockets, the .NET SDK's spelling",
			in:   "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=v;TransportType=amqpwebsockets",
			want: ConnectionString{Kind: KindAzure, Host: "ns.servicebus.windows.net", Port: 5671, TLS: true, WebSockets: true,
				KeyName: "k", Key: "v"},
			redacted: "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=<redacted>;TransportType=AmqpWebSockets",
		},
		{
			name:     "generic",
			in:       "amqp://guest:" + secretPwd + "@127.0.0.1:5673",
			want:     ConnectionString{Kind: KindGeneric, Host: "127.0.0.1", Port: 5673, User: "guest", Password: secretPwd},
			redacted: "amqp://guest:<redacted>@127.0.0.1:5673",
		},
		{
			name:     "generic default port, escaped password, trailing slash",
			in:       "AMQP://us%40er:p%3Aw@rabbit/",
			want:     ConnectionString{Kind: KindGeneric, Host: "rabbit", Port: 5672, User: "us@er", Password: "p:w"},
			redacted: "amqp://us%40er:<redacted>@rabbit:5672",
		},
		{
			name:     "generic TLS, no credentials, IPv6",
			in:       "amqps://[::1]",
			want:     ConnectionString{Kind: KindGeneric, Host: "::1", Port: 5671, TLS: true},
			redacted: "amqps://[::1]:5671",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseConnectionString(tc.in)
			if err != nil {
				t.Fatalf("ParseConnectionString: %v", err)
			}
			if got != tc.want {
				t.Fatalf("got  %#v\nwant %#v", got, tc.want)
			}
			if r := got.Redacted(); r != tc.redacted {
				t.Fatalf("Redacted:\n got %s\nwant %s", r, tc.redacted)
			}
			if got.String() != got.Redacted() {
				t.Fatalf("String %q differs from Redacted", got.String())
			}
			for _, secret := range []string{secretKey, secretPwd, "x;y", "sig=" + readySAS[strings.Index(readySAS, "sig=")+4:][:8]} {
				if strings.Contains(got.Redacted(), secret) {
					t.Fatalf("Redacted %q shows a secret", got.Redacted())
				}
			}
		})
	}
}

func TestParseConnectionStringBad(t *testing.T) {
	const ep = "Endpoint=sb://ns.servicebus.windows.net/;"
	tests := []struct {
		name, in, want string
	}{
		{"empty", "  ", "it is empty"},
		{"no parts", ";;;", "it has no KEY=VALUE parts"},
		{"part without =", ep + "SharedAccessKeyName=k;" + secretPwd, "part 3 has no '=' (parts are KEY=VALUE separated by ';')"},
		{"empty key", ep + "=" + secretKey, "part 2 has an empty key"},
		{"unknown key", ep + "SharedAccesKey=" + secretKey + ";SharedAccessKeyName=k", "unknown key \"SharedAccesKey\" (known: Endpoint, SharedAccessKeyName, SharedAccessKey, SharedAccessSignature, EntityPath, UseDevelopmentEmulator, TransportType)"},
		{"unknown key that might be a secret", ep + "SharedAccessKeyName=k;SharedAccessKey=abc;" + secretKey + "=x", "unknown key in part 4 (known: Endpoint, SharedAccessKeyName, SharedAccessKey, SharedAccessSignature, EntityPath, UseDevelopmentEmulator, TransportType)"},
		{"duplicate key", ep + "SharedAccessKeyName=k;sharedaccesskey=" + secretKey + ";SharedAccessKey=" + secretKey, "the key SharedAccessKey appears twice"},
		{"empty value", ep + "SharedAccessKeyName=k;SharedAccessKey=", "the key SharedAccessKey has an empty value"},
		{"unclosed quote", ep + "SharedAccessKeyName=k;SharedAccessKey=\"" + secretKey, "the value of SharedAccessKey has no closing quote"},
		{"text after quote", ep + "SharedAccessKeyName=k;SharedAccessKey=\"a\"" + secretKey, "unexpected text after the quoted value of SharedAccessKey"},
		{"no endpoint", "SharedAccessKeyName=k;SharedAccessKey=" + secretKey, "the key Endpoint is missing (Endpoint=sb://NAMESPACE.servicebus.windows.net/)"},
		{"https endpoint", "Endpoint=https://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=" + secretKey, "Endpoint \"https://ns.servicebus.windows.net/\" must start with sb://"},
		{"endpoint with path", "Endpoint=sb://ns.servicebus.windows.net/q1;SharedAccessKeyName=k;SharedAccessKey=" + secretKey, "Endpoint \"sb://ns.servicebus.windows.net/q1\" must name only a host (and port); put the entity in EntityPath"},
		{"bad port", "Endpoint=sb://ns:99999;SharedAccessKeyName=k;SharedAccessKey=" + secretKey, "the port \"99999\" is not a number from 1 to 65535"},
		{"empty port", "Endpoint=sb://ns:;SharedAccessKeyName=k;SharedAccessKey=" + secretKey, "the port after \"ns\" is empty"},
		{"no host", "Endpoint=sb://;SharedAccessKeyName=k;SharedAccessKey=" + secretKey, "the host name is missing"},
		{"bad emulator flag", ep + "SharedAccessKeyName=k;SharedAccessKey=" + secretKey + ";UseDevelopmentEmulator=yes", "UseDevelopmentEmulator is \"yes\"; it takes true or false"},
		{"transport type", ep + "SharedAccessKeyName=k;SharedAccessKey=" + secretKey + ";TransportType=Mqtt", "TransportType \"Mqtt\" is not supported; it takes Amqp or AmqpWebSockets"},
		{"no credential", ep + "EntityPath=q", "it has no credential: add SharedAccessKeyName and SharedAccessKey, or SharedAccessSignature"},
		{"key without name", ep + "SharedAccessKey=" + secretKey, "SharedAccessKey is given without SharedAccessKeyName"},
		{"name without key", ep + "SharedAccessKeyName=k", "SharedAccessKeyName \"k\" is given without SharedAccessKey"},
		{"both key and signature", ep + "SharedAccessKeyName=k;SharedAccessKey=" + secretKey + ";SharedAccessSignature=" + readySAS, "give either SharedAccessSignature or SharedAccessKeyName with SharedAccessKey, not both"},
		{"signature without prefix", ep + "SharedAccessSignature=" + secretKey, "SharedAccessSignature is malformed: it is not of the form SharedAccessSignature sr=...&sig=...&se=...&skn=..."},
		{"signature without sig", ep + "SharedAccessSignature=SharedAccessSignature sr=a&se=1&skn=k", "SharedAccessSignature is malformed: the field sig is missing or empty"},
		{"entity path of slashes", ep + "SharedAccessKeyName=k;SharedAccessKey=" + secretKey + ";EntityPath=//", "EntityPath names no entity"},
		{"url with path", "amqp://guest:" + secretPwd + "@host:5672/queue/x", "an AMQP URL takes no path or query (use --entity to choose a queue)"},
		{"url bad escape", "amqp://guest:" + secretPwd + "%zz@host", "the password in the AMQP URL is not URL-encoded properly"},
		{"url bad port", "amqp://guest:" + secretPwd + "@host:abc", "the port \"abc\" is not a number from 1 to 65535"},
		{"url empty user", "amqp://:" + secretPwd + "@host", "the AMQP URL has an empty user name"},
		{"url no host", "amqp://guest:" + secretPwd + "@", "the host name is missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConnectionString(tc.in)
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			var be *broker.Error
			if !errors.As(err, &be) || be.Code != broker.CodeInvalid {
				t.Fatalf("error %v is not a CodeInvalid *broker.Error", err)
			}
			if want := "bad connection string: " + tc.want; be.Message != want {
				t.Fatalf("message:\n got %s\nwant %s", be.Message, want)
			}
			for _, secret := range []string{secretKey, secretPwd, readySAS[strings.Index(readySAS, "sig="):]} {
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("error %q echoes a secret", err)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q is more than one line", err)
			}
		})
	}
}

func TestFromNamespace(t *testing.T) {
	tests := []struct{ in, host string }{
		{"contoso.servicebus.windows.net", "contoso.servicebus.windows.net"},
		{"contoso", "contoso.servicebus.windows.net"},
		{"sb://contoso.servicebus.windows.net/", "contoso.servicebus.windows.net"},
		{"contoso.servicebus.usgovcloudapi.net", "contoso.servicebus.usgovcloudapi.net"},
	}
	for _, tc := range tests {
		c, err := FromNamespace(tc.in)
		if err != nil {
			t.Fatalf("FromNamespace(%q): %v", tc.in, err)
		}
		want := ConnectionString{Kind: KindAzure, Host: tc.host, Port: 5671, TLS: true, Entra: true}
		if c != want {
			t.Fatalf("FromNamespace(%q) = %#v, want %#v", tc.in, c, want)
		}
		if r := c.Redacted(); r != "namespace "+tc.host+" (Microsoft Entra ID)" {
			t.Fatalf("Redacted = %q", r)
		}
	}
	if _, err := FromNamespace("https://x.servicebus.windows.net"); broker.CodeOf(err) != broker.CodeInvalid {
		t.Fatalf("https namespace: err = %v, want CodeInvalid", err)
	}
}

func TestWebSocketURL(t *testing.T) {
	for in, want := range map[string]string{
		"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=v":              "wss://ns.servicebus.windows.net:443/$servicebus/websocket",
		"Endpoint=sb://localhost:5671;SharedAccessKeyName=k;SharedAccessKey=v":                          "wss://localhost:5671/$servicebus/websocket",
		"Endpoint=sb://localhost;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true":   "wss://localhost:5672/$servicebus/websocket",
		"Endpoint=sb://[::1]:40000;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true": "wss://[::1]:40000/$servicebus/websocket",
	} {
		c, err := ParseConnectionString(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.WebSocketURL(); got != want {
			t.Errorf("%s: WebSocketURL = %s, want %s", in, got, want)
		}
	}
}
