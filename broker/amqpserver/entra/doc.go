// Package entra accepts Microsoft Entra ID (Azure AD) access tokens for
// local development, as Azurite does for storage: a JSON Web Token whose
// audience is Service Bus's ("https://servicebus.azure.net", or the
// namespace's own "https://HOST"), which has not expired and is already
// valid (five minutes of clock skew either way).
//
// The signature is not checked: that needs Microsoft's signing keys, which
// a listener that must work offline does not have. Anyone who can reach the
// listener can therefore mint a token; a listener that accepts them says so
// when it starts (WarningLine).
//
// Rights come from roles, by the token's object id (oid), else its
// application id (appid, azp), from the [entra_id] section of the config
// file, as Azure's built-in roles give them: Owner (Azure Service Bus Data
// Owner: Manage, Send, Listen), Sender (Send), Receiver (Listen). An
// identity the section does not name gets default_role, Owner unless set.
//
//	[entra_id]
//	default_role = "Owner"            # Owner, Sender, Receiver or None
//	accept_opaque_tokens = true       # see below
//
//	[entra_id.roles]
//	"0b1c…-oid" = "Sender"
//	"3f2e…-appid" = ["Sender", "Receiver"]
//
// A token that is not a JWT at all (such as the fixed string that a fake
// `az` command or a test credential hands out) names no identity, audience
// or expiry. It is accepted with default_role's rights, valid until the
// expiry the client gives beside it (the $cbs put-token's expiration), or
// for an hour, unless accept_opaque_tokens is false.
package entra
