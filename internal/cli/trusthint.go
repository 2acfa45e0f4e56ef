package cli

// trustHint is the one line serve logs about its local CA: how each
// runtime's Service Bus SDK trusts it. Go reads SSL_CERT_FILE; Node.js
// adds NODE_EXTRA_CA_CERTS; Python's client (uamqp, on OpenSSL) reads
// SSL_CERT_FILE or its connection_verify argument, but its admin client
// (requests) ignores SSL_CERT_FILE and reads REQUESTS_CA_BUNDLE (the two
// that broker/amqpserver/uamqp_test.go gives it are connection_verify and
// REQUESTS_CA_BUNDLE); Java reads its trust store
// (keytool, javax.net.ssl.trustStore); .NET the system store.
func trustHint(ca string) string {
	return "trust the local CA " + ca + ": Go SSL_CERT_FILE=" + ca +
		"; Node.js NODE_EXTRA_CA_CERTS=" + ca +
		"; Python SSL_CERT_FILE=" + ca + " (or connection_verify=" + ca + ") and, for the admin client, REQUESTS_CA_BUNDLE=" + ca +
		"; Java keytool -importcert -alias peeklock -file " + ca + " -keystore peeklock.jks, then -Djavax.net.ssl.trustStore=peeklock.jks" +
		"; .NET the system store (e.g. cp " + ca + " /usr/local/share/ca-certificates/peeklock.crt && update-ca-certificates)"
}

// portsHint says where SDKs that take no port from the endpoint dial: the
// SDKs for Azure (no UseDevelopmentEmulator) use AMQP over TLS on 5671 and
// the admin API on 443.
const portsHint = "an SDK whose endpoint names no port (Endpoint=sb://localhost;...) dials 5671 (AMQP over TLS) and 443 (admin API): " +
	"serve --tls-addr 127.0.0.1:5671 --admin 127.0.0.1:443 (or UseDevelopmentEmulator=true: plain AMQP on 5672, the admin API on 5300)"
