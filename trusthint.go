package main

// trustHint is the one line serve logs about its local CA: how each
// runtime's Service Bus SDK trusts it. Go reads SSL_CERT_FILE; Node.js
// adds NODE_EXTRA_CA_CERTS; Python's uamqp and requests ignore
// SSL_CERT_FILE and read the system store, REQUESTS_CA_BUNDLE (the admin
// client) or the client's connection_verify argument; Java reads its trust
// store (keytool, javax.net.ssl.trustStore); .NET the system store.
func trustHint(ca string) string {
	return "trust the local CA " + ca + ": Go SSL_CERT_FILE=" + ca +
		"; Node.js NODE_EXTRA_CA_CERTS=" + ca +
		"; Python the system store (update-ca-certificates), or REQUESTS_CA_BUNDLE=" + ca + " and connection_verify=" + ca +
		"; Java keytool -importcert -alias peeklock -file " + ca + " -keystore peeklock.jks, then -Djavax.net.ssl.trustStore=peeklock.jks" +
		"; .NET the system store (e.g. cp " + ca + " /usr/local/share/ca-certificates/peeklock.crt && update-ca-certificates)"
}

// portsHint says where SDKs that take no port from the endpoint dial: the
// SDKs for Azure (no UseDevelopmentEmulator) use AMQP over TLS on 5671 and
// the admin API on 443.
const portsHint = "an SDK whose endpoint names no port (Endpoint=sb://localhost;...) dials 5671 (AMQP over TLS) and 443 (admin API): " +
	"serve --tls-addr 127.0.0.1:5671 --admin 127.0.0.1:443 (or UseDevelopmentEmulator=true: plain AMQP on 5672, the admin API on 5300)"
