package wire

import (
	"fmt"

	"github.com/peeklock/peeklock/broker"
)

// The delivery tag of a Service Bus peek-lock delivery is the lock token in
// .NET GUID byte order: the first three groups (4, 2 and 2 bytes) are
// little-endian, the last 8 bytes as in RFC 4122. broker.LockToken and the
// management operations use RFC 4122 order.

// DeliveryTag returns the 16-byte delivery tag for a lock token.
func DeliveryTag(t broker.LockToken) [16]byte {
	return swapGUID([16]byte(t))
}

// LockTokenFromDeliveryTag returns the lock token a delivery tag carries.
// A tag that is not 16 bytes is a *broker.Error with CodeInvalid.
func LockTokenFromDeliveryTag(tag []byte) (broker.LockToken, error) {
	if len(tag) != 16 {
		return broker.LockToken{}, &broker.Error{Code: broker.CodeInvalid,
			Message: fmt.Sprintf("delivery tag of %d bytes is not a lock token (want 16)", len(tag))}
	}
	return broker.LockToken(swapGUID([16]byte(tag))), nil
}

// swapGUID converts between RFC 4122 and .NET GUID byte order; the
// conversion is its own inverse.
func swapGUID(u [16]byte) [16]byte {
	u[0], u[1], u[2], u[3] = u[3], u[2], u[1], u[0]
	u[4], u[5] = u[5], u[4]
	u[6], u[7] = u[7], u[6]
	return u
}
