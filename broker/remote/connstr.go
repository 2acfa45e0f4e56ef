package remote

import (
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/broker/sas"
)

// Kind says what sort of endpoint a connection string names.
type Kind uint8

// Endpoint kinds.
const (
	// KindAzure is Azure Service Bus: AMQP over TLS (amqps, port 5671) and
	// the admin API over https.
	KindAzure Kind = iota
	// KindEmulator is the Service Bus emulator or peeklock serve
	// (UseDevelopmentEmulator=true): plain AMQP on port 5672 and the admin
	// API over plain http on port 5300.
	KindEmulator
	// KindGeneric is a generic AMQP 1.0 broker (amqp://user:pass@host:port),
	// such as RabbitMQ with its AMQP 1.0 plugin: no Service Bus extensions.
	KindGeneric
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case KindEmulator:
		return "emulator"
	case KindGeneric:
		return "generic AMQP 1.0"
	}
	return "Azure Service Bus"
}

// Default ports.
const (
	PortAMQP          = 5672
	PortAMQPS         = 5671
	PortEmulatorAdmin = 5300
	PortHTTPS         = 443
)

// AzureSuffix is the DNS suffix of Azure Service Bus namespaces in the
// public cloud; FromNamespace appends it to a bare namespace name.
const AzureSuffix = ".servicebus.windows.net"

// ConnectionString is a parsed connection string. Key, SharedAccessSignature
// and Password are secrets: String and Redacted never show them, and no
// parse error ever contains them.
type ConnectionString struct {
	Kind Kind
	// Host is the host name (the namespace's fully qualified name for Azure),
	// without a port.
	Host string
	// Port is the AMQP port.
	Port int
	// PortGiven is true when the endpoint names the port; the admin API is
	// then on that port too (https://HOST:PORT), as the SDKs assume.
	PortGiven bool
	// TLS is true when the AMQP connection uses TLS (Azure; amqps:// URLs).
	TLS bool
	// WebSockets is true when AMQP goes over a WebSocket
	// (TransportType=AmqpWebSockets, or connect --websockets):
	// wss://HOST/$servicebus/websocket on 443 for Azure, on the AMQP port
	// elsewhere (WebSocketURL).
	WebSockets bool

	// KeyName and Key are the shared access key (Azure and emulator).
	KeyName string
	Key     string
	// SharedAccessSignature is a ready-made token
	// ("SharedAccessSignature sr=...&sig=...&se=...&skn=...").
	SharedAccessSignature string
	// EntityPath is the entity the string is scoped to, if any.
	EntityPath string
	// Entra is true when the namespace is reached with a Microsoft Entra ID
	// credential instead of a key (FromNamespace).
	Entra bool

	// User and Password are the SASL PLAIN credentials of a generic URL.
	User     string
	Password string
}

// Address returns "host:port" for dialling.
func (c ConnectionString) Address() string {
	return net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
}

// WebSocketURL returns where AMQP over WebSockets is served: port 443 for
// an Azure namespace without a port in its endpoint, else the AMQP port.
func (c ConnectionString) WebSocketURL() string {
	port := c.Port
	if c.Kind == KindAzure && !c.PortGiven {
		port = PortHTTPS
	}
	return "wss://" + net.JoinHostPort(c.Host, strconv.Itoa(port)) + WebSocketPath
}

// WebSocketPath is where Service Bus serves AMQP over WebSockets.
const WebSocketPath = "/$servicebus/websocket"

// String returns the redacted form, safe to show and log.
func (c ConnectionString) String() string { return c.Redacted() }

// Redacted returns the connection string with every secret replaced by
// "<redacted>": safe to show on screen and in logs.
func (c ConnectionString) Redacted() string {
	const hidden = "<redacted>"
	if c.Kind == KindGeneric {
		u := url.URL{Scheme: "amqp", Host: c.Address()}
		if c.TLS {
			u.Scheme = "amqps"
		}
		s := u.Scheme + "://"
		if c.User != "" {
			s += url.User(c.User).String()
			if c.Password != "" {
				s += ":" + hidden
			}
			s += "@"
		}
		return s + u.Host
	}
	if c.Entra {
		return "namespace " + c.Host + " (Microsoft Entra ID)"
	}
	host := c.Host
	if (c.Kind == KindAzure && c.Port != PortAMQPS) || (c.Kind == KindEmulator && c.Port != PortAMQP) {
		host = c.Address()
	}
	parts := []string{"Endpoint=sb://" + host + "/"}
	if c.KeyName != "" {
		parts = append(parts, "SharedAccessKeyName="+c.KeyName)
	}
	if c.Key != "" {
		parts = append(parts, "SharedAccessKey="+hidden)
	}
	if c.SharedAccessSignature != "" {
		parts = append(parts, "SharedAccessSignature="+hidden)
	}
	if c.EntityPath != "" {
		parts = append(parts, "EntityPath="+c.EntityPath)
	}
	if c.Kind == KindEmulator {
		parts = append(parts, "UseDevelopmentEmulator=true")
	}
	if c.WebSockets {
		parts = append(parts, "TransportType=AmqpWebSockets")
	}
	return strings.Join(parts, ";")
}

// invalid returns a CodeInvalid error about a connection string. Callers
// must never pass a secret in format or args.
func invalid(format string, args ...any) *broker.Error {
	e := broker.Errorf(broker.CodeInvalid, format, args...)
	e.Message = "bad connection string: " + e.Message
	return e
}

// ParseConnectionString parses an Azure Service Bus connection string
// (Endpoint=sb://host[:port]/;SharedAccessKeyName=...;SharedAccessKey=...,
// or ...;SharedAccessSignature=..., optional EntityPath and
// UseDevelopmentEmulator=true) or a generic AMQP URL
// (amqp://user:pass@host:port, amqps://...).
//
// Keys match without regard to case and may come in any order; values may be
// quoted with " or ' (a doubled quote inside stands for one); empty parts
// (trailing semicolons) are ignored. Errors are *broker.Error with
// CodeInvalid and one line that never contains a key, a signature or a
// password.
func ParseConnectionString(s string) (ConnectionString, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return ConnectionString{}, invalid("it is empty")
	}
	lower := strings.ToLower(s)
	if strings.HasPrefix(lower, "amqp://") || strings.HasPrefix(lower, "amqps://") {
		return parseURL(s)
	}
	return parseAzure(s)
}

// parseURL parses amqp://user:pass@host:port.
func parseURL(s string) (ConnectionString, error) {
	c := ConnectionString{Kind: KindGeneric, Port: PortAMQP}
	scheme, rest, _ := strings.Cut(s, "://")
	if strings.EqualFold(scheme, "amqps") {
		c.TLS, c.Port = true, PortAMQPS
	}
	// Split by hand: url.Parse's errors quote the whole URL, password
	// included.
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		tail := rest[i:]
		rest = rest[:i]
		if tail != "/" {
			return ConnectionString{}, invalid("an AMQP URL takes no path or query (use --entity to choose a queue)")
		}
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		userinfo := rest[:at]
		rest = rest[at+1:]
		user, pass, hasPass := strings.Cut(userinfo, ":")
		var err error
		if c.User, err = url.PathUnescape(user); err != nil {
			return ConnectionString{}, invalid("the user name in the AMQP URL is not URL-encoded properly")
		}
		if hasPass {
			if c.Password, err = url.PathUnescape(pass); err != nil {
				return ConnectionString{}, invalid("the password in the AMQP URL is not URL-encoded properly")
			}
		}
		if c.User == "" {
			return ConnectionString{}, invalid("the AMQP URL has an empty user name")
		}
	}
	host, port, err := splitHostPort(rest)
	if err != nil {
		return ConnectionString{}, err
	}
	c.Host = host
	if port != 0 {
		c.Port = port
	}
	return c, nil
}

// splitHostPort splits "host[:port]"; port is 0 when absent. Host names are
// not secrets, but it still says nothing beyond what is wrong.
func splitHostPort(hp string) (string, int, error) {
	if hp == "" {
		return "", 0, invalid("the host name is missing")
	}
	host, portText := hp, ""
	if strings.HasPrefix(hp, "[") { // [v6]:port
		end := strings.Index(hp, "]")
		if end < 0 {
			return "", 0, invalid("the IPv6 host has no closing ']'")
		}
		host = hp[1:end]
		rest := hp[end+1:]
		if rest != "" {
			if !strings.HasPrefix(rest, ":") {
				return "", 0, invalid("unexpected text after the IPv6 host")
			}
			portText = rest[1:]
		}
	} else if i := strings.LastIndex(hp, ":"); i >= 0 {
		host, portText = hp[:i], hp[i+1:]
	}
	if host == "" {
		return "", 0, invalid("the host name is missing")
	}
	if strings.ContainsAny(host, " \t@") || (strings.Contains(host, ":") && !strings.HasPrefix(hp, "[")) {
		return "", 0, invalid("the host name %q is not valid", host)
	}
	if portText == "" {
		if strings.HasSuffix(hp, ":") {
			return "", 0, invalid("the port after %q is empty", host)
		}
		return host, 0, nil
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, invalid("the port %q is not a number from 1 to 65535", portText)
	}
	return host, port, nil
}

// Connection string keys, lower case.
const (
	keyEndpoint  = "endpoint"
	keyKeyName   = "sharedaccesskeyname"
	keyKey       = "sharedaccesskey"
	keySignature = "sharedaccesssignature"
	keyEntity    = "entitypath"
	keyEmulator  = "usedevelopmentemulator"
	keyTransport = "transporttype"
)

// keyNames are the canonical spellings, for messages.
var keyNames = map[string]string{
	keyEndpoint: "Endpoint", keyKeyName: "SharedAccessKeyName", keyKey: "SharedAccessKey",
	keySignature: "SharedAccessSignature", keyEntity: "EntityPath", keyEmulator: "UseDevelopmentEmulator",
	keyTransport: "TransportType",
}

// parseAzure parses the key=value;... form.
func parseAzure(s string) (ConnectionString, error) {
	pairs, err := splitPairs(s)
	if err != nil {
		return ConnectionString{}, err
	}
	values := make(map[string]string, len(pairs))
	for _, p := range pairs {
		if _, known := keyNames[p.key]; !known {
			return ConnectionString{}, invalid("unknown key %s (known: Endpoint, SharedAccessKeyName, SharedAccessKey, SharedAccessSignature, EntityPath, UseDevelopmentEmulator, TransportType)", describeKey(p.rawKey, p.index))
		}
		if _, dup := values[p.key]; dup {
			return ConnectionString{}, invalid("the key %s appears twice", keyNames[p.key])
		}
		if p.value == "" {
			return ConnectionString{}, invalid("the key %s has an empty value", keyNames[p.key])
		}
		values[p.key] = p.value
	}
	c := ConnectionString{Kind: KindAzure, TLS: true, Port: PortAMQPS}
	if v, ok := values[keyEmulator]; ok {
		switch strings.ToLower(v) {
		case "true":
			c.Kind, c.TLS, c.Port = KindEmulator, false, PortAMQP
		case "false":
		default:
			return ConnectionString{}, invalid("UseDevelopmentEmulator is %q; it takes true or false", clip(v))
		}
	}
	if v, ok := values[keyTransport]; ok {
		switch {
		case strings.EqualFold(v, "Amqp"):
		case strings.EqualFold(v, "AmqpWebSockets"):
			c.WebSockets = true
		default:
			return ConnectionString{}, invalid("TransportType %q is not supported; it takes Amqp or AmqpWebSockets", clip(v))
		}
	}
	ep, ok := values[keyEndpoint]
	if !ok {
		return ConnectionString{}, invalid("the key Endpoint is missing (Endpoint=sb://NAMESPACE.servicebus.windows.net/)")
	}
	if err := c.parseEndpoint(ep); err != nil {
		return ConnectionString{}, err
	}
	c.KeyName = values[keyKeyName]
	c.Key = values[keyKey]
	c.SharedAccessSignature = values[keySignature]
	c.EntityPath = strings.Trim(values[keyEntity], "/")
	if _, ok := values[keyEntity]; ok && c.EntityPath == "" {
		return ConnectionString{}, invalid("EntityPath names no entity")
	}
	switch {
	case c.SharedAccessSignature != "" && (c.Key != "" || c.KeyName != ""):
		return ConnectionString{}, invalid("give either SharedAccessSignature or SharedAccessKeyName with SharedAccessKey, not both")
	case c.SharedAccessSignature != "":
		tok, err := sas.Parse(c.SharedAccessSignature)
		if err != nil {
			// sas.Parse names the faulty field; a message that quotes
			// any text is left out, since the text might be secret.
			why := strings.TrimPrefix(messageOf(err), "malformed shared access signature: ")
			if strings.ContainsAny(why, "\"'") {
				why = "it is not of the form SharedAccessSignature sr=...&sig=...&se=...&skn=..."
			}
			return ConnectionString{}, invalid("SharedAccessSignature is malformed: %s", why)
		}
		c.KeyName = tok.KeyName
	case c.KeyName == "" && c.Key == "":
		return ConnectionString{}, invalid("it has no credential: add SharedAccessKeyName and SharedAccessKey, or SharedAccessSignature")
	case c.KeyName == "":
		return ConnectionString{}, invalid("SharedAccessKey is given without SharedAccessKeyName")
	case c.Key == "":
		return ConnectionString{}, invalid("SharedAccessKeyName %q is given without SharedAccessKey", c.KeyName)
	}
	return c, nil
}

// parseEndpoint reads sb://host[:port][/].
func (c *ConnectionString) parseEndpoint(ep string) error {
	scheme, rest, ok := strings.Cut(ep, "://")
	if !ok || !strings.EqualFold(scheme, "sb") {
		return invalid("Endpoint %q must start with sb://", clip(ep))
	}
	rest = strings.TrimRight(rest, "/")
	if strings.ContainsAny(rest, "/?#") {
		return invalid("Endpoint %q must name only a host (and port); put the entity in EntityPath", clip(ep))
	}
	host, port, err := splitHostPort(rest)
	if err != nil {
		return err
	}
	c.Host = host
	if port != 0 {
		c.Port, c.PortGiven = port, true
	}
	return nil
}

// FromNamespace returns the connection of a namespace reached with a
// Microsoft Entra ID credential: "NAME.servicebus.windows.net", a bare
// "NAME" (the public cloud's suffix is added), or "sb://NAME.../".
func FromNamespace(ns string) (ConnectionString, error) {
	ns = strings.TrimSpace(ns)
	if scheme, rest, ok := strings.Cut(ns, "://"); ok {
		if !strings.EqualFold(scheme, "sb") {
			return ConnectionString{}, invalid("namespace %q: use NAME.servicebus.windows.net or sb://NAME.servicebus.windows.net/", clip(ns))
		}
		ns = rest
	}
	ns = strings.TrimRight(ns, "/")
	c := ConnectionString{Kind: KindAzure, TLS: true, Port: PortAMQPS, Entra: true}
	host, port, err := splitHostPort(ns)
	if err != nil {
		return ConnectionString{}, err
	}
	if strings.ContainsAny(host, "/?#") {
		return ConnectionString{}, invalid("namespace %q must be a host name", clip(ns))
	}
	if !strings.Contains(host, ".") && host != "localhost" {
		host += AzureSuffix
	}
	c.Host = host
	if port != 0 {
		c.Port = port
	}
	return c, nil
}

// pair is one key=value part of a connection string.
type pair struct {
	key, rawKey, value string
	index              int // 1-based part number
}

// splitPairs splits key=value;key=value with quoting. Messages never show a
// value, and show a key only when it looks like a key.
func splitPairs(s string) ([]pair, error) {
	var out []pair
	i, part := 0, 0
	for i < len(s) {
		// key
		part++
		start := i
		for i < len(s) && s[i] != '=' && s[i] != ';' {
			i++
		}
		rawKey := strings.TrimSpace(s[start:i])
		if i >= len(s) || s[i] == ';' {
			if rawKey == "" { // empty part: ";;" or a trailing ";"
				if i < len(s) {
					i++
				}
				part--
				continue
			}
			return nil, invalid("part %d has no '=' (parts are KEY=VALUE separated by ';')", part)
		}
		if rawKey == "" {
			return nil, invalid("part %d has an empty key", part)
		}
		i++ // '='
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		var value string
		if i < len(s) && (s[i] == '"' || s[i] == '\'') {
			q := s[i]
			i++
			var b strings.Builder
			closed := false
			for i < len(s) {
				if s[i] == q {
					if i+1 < len(s) && s[i+1] == q { // doubled quote
						b.WriteByte(q)
						i += 2
						continue
					}
					i++
					closed = true
					break
				}
				b.WriteByte(s[i])
				i++
			}
			if !closed {
				return nil, invalid("the value of %s has no closing quote", describeKey(rawKey, part))
			}
			for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
				i++
			}
			if i < len(s) && s[i] != ';' {
				return nil, invalid("unexpected text after the quoted value of %s", describeKey(rawKey, part))
			}
			value = b.String()
		} else {
			vs := i
			for i < len(s) && s[i] != ';' {
				i++
			}
			value = strings.TrimSpace(s[vs:i])
		}
		if i < len(s) {
			i++ // ';'
		}
		out = append(out, pair{key: strings.ToLower(rawKey), rawKey: rawKey, value: value, index: part})
	}
	if len(out) == 0 {
		return nil, invalid("it has no KEY=VALUE parts")
	}
	return out, nil
}

// describeKey names a key for a message: by its canonical name when known,
// by its text when it looks like a key name (letters only, short), and by
// its position otherwise, so that a mangled secret is never echoed.
func describeKey(raw string, part int) string {
	if n, ok := keyNames[strings.ToLower(raw)]; ok {
		return n
	}
	if len(raw) <= 32 && raw != "" && strings.IndexFunc(raw, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z')
	}) < 0 {
		return strconv.Quote(raw)
	}
	return "in part " + strconv.Itoa(part)
}

// clip shortens a non-secret value for a message.
func clip(s string) string {
	const max = 80
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// messageOf returns the message of a *broker.Error, or its text.
func messageOf(err error) string {
	if be, ok := err.(*broker.Error); ok {
		return be.Message
	}
	return err.Error()
}

// sasExpiry returns the expiry of a ready-made signature (zero when it cannot
// be read, which parsing has ruled out).
func sasExpiry(token string) time.Time {
	tok, err := sas.Parse(token)
	if err != nil {
		return time.Time{}
	}
	return tok.Expiry
}
