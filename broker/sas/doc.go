// Package sas validates and signs Service Bus shared access signatures, the
// tokens that the official SDKs send to the CBS node ($cbs put-token) and in
// the Authorization header of the admin HTTP API:
//
//	SharedAccessSignature sr=<url-encoded audience>&sig=<url-encoded base64 HMAC-SHA256>&se=<unix expiry>&skn=<key name>
//
// The signature is base64(HMAC-SHA256(key, sr + "\n" + se)), computed over
// the sr and se fields exactly as they appear in the token. A Validator
// checks a token against the configured keys and an injected clock, and
// whether its audience covers the entity that a request addresses
// (Covers). Every failure is a *broker.Error with broker.CodeUnauthorized
// whose message says what is wrong; no message ever contains a key or a
// signature.
package sas
