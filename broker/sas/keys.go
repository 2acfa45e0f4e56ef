package sas

// The key that the Service Bus emulator configures, and that peeklock uses
// when no key is configured.
const (
	DefaultKeyName = "RootManageSharedAccessKey"
	DefaultKey     = "SAS_KEY_VALUE"
)

// DefaultKeys returns a new map holding only the emulator's default key.
func DefaultKeys() map[string]string {
	return map[string]string{DefaultKeyName: DefaultKey}
}
