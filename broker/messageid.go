package broker

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/google/uuid"
)

// NewMessageID returns a new random (version 4) UUID in its text form: the
// MessageId a broker gives a message sent without one, as Service Bus does
// ("sets an ID as default, only if the application doesn't set its own").
// It needs to be unique, not secret, so it draws on the runtime's fast
// generator rather than crypto/rand.
func NewMessageID() string {
	var u uuid.UUID
	binary.LittleEndian.PutUint64(u[0:8], rand.Uint64())
	binary.LittleEndian.PutUint64(u[8:16], rand.Uint64())
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return u.String()
}
