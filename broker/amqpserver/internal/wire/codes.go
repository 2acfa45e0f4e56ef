package wire

// Type codes (format codes) of the AMQP 1.0 primitive encodings, §1.6.
const (
	codeDescribed = 0x00

	codeNull       = 0x40
	codeBool       = 0x56
	codeTrue       = 0x41
	codeFalse      = 0x42
	codeUbyte      = 0x50
	codeUshort     = 0x60
	codeUint       = 0x70
	codeSmallUint  = 0x52
	codeUint0      = 0x43
	codeUlong      = 0x80
	codeSmallUlong = 0x53
	codeUlong0     = 0x44
	codeByte       = 0x51
	codeShort      = 0x61
	codeInt        = 0x71
	codeSmallInt   = 0x54
	codeLong       = 0x81
	codeSmallLong  = 0x55
	codeFloat      = 0x72
	codeDouble     = 0x82
	codeDecimal32  = 0x74
	codeDecimal64  = 0x84
	codeDecimal128 = 0x94
	codeChar       = 0x73
	codeTimestamp  = 0x83
	codeUUID       = 0x98
	codeVbin8      = 0xa0
	codeVbin32     = 0xb0
	codeStr8       = 0xa1
	codeStr32      = 0xb1
	codeSym8       = 0xa3
	codeSym32      = 0xb3
	codeList0      = 0x45
	codeList8      = 0xc0
	codeList32     = 0xd0
	codeMap8       = 0xc1
	codeMap32      = 0xd1
	codeArray8     = 0xe0
	codeArray32    = 0xf0
)

// Descriptor codes of the composite types and sections this package knows
// (domain 0x00000000, the AMQP specification's own).
const (
	descOpen        = 0x10
	descBegin       = 0x11
	descAttach      = 0x12
	descFlow        = 0x13
	descTransfer    = 0x14
	descDisposition = 0x15
	descDetach      = 0x16
	descEnd         = 0x17
	descClose       = 0x18

	descError = 0x1d

	descReceived = 0x23
	descAccepted = 0x24
	descRejected = 0x25
	descReleased = 0x26
	descModified = 0x27

	descSource      = 0x28
	descTarget      = 0x29
	descCoordinator = 0x30

	descSASLMechanisms = 0x40
	descSASLInit       = 0x41
	descSASLChallenge  = 0x42
	descSASLResponse   = 0x43
	descSASLOutcome    = 0x44

	descHeader                = 0x70
	descDeliveryAnnotations   = 0x71
	descMessageAnnotations    = 0x72
	descProperties            = 0x73
	descApplicationProperties = 0x74
	descData                  = 0x75
	descAMQPSequence          = 0x76
	descAMQPValue             = 0x77
	descFooter                = 0x78
)

// symbolicDescriptors maps the symbolic descriptor names of §1.6 to their
// numeric codes, so composites sent with symbolic descriptors decode too.
var symbolicDescriptors = map[string]uint64{
	"amqp:open:list":                  descOpen,
	"amqp:begin:list":                 descBegin,
	"amqp:attach:list":                descAttach,
	"amqp:flow:list":                  descFlow,
	"amqp:transfer:list":              descTransfer,
	"amqp:disposition:list":           descDisposition,
	"amqp:detach:list":                descDetach,
	"amqp:end:list":                   descEnd,
	"amqp:close:list":                 descClose,
	"amqp:error:list":                 descError,
	"amqp:received:list":              descReceived,
	"amqp:accepted:list":              descAccepted,
	"amqp:rejected:list":              descRejected,
	"amqp:released:list":              descReleased,
	"amqp:modified:list":              descModified,
	"amqp:source:list":                descSource,
	"amqp:target:list":                descTarget,
	"amqp:coordinator:list":           descCoordinator,
	"amqp:sasl-mechanisms:list":       descSASLMechanisms,
	"amqp:sasl-init:list":             descSASLInit,
	"amqp:sasl-challenge:list":        descSASLChallenge,
	"amqp:sasl-response:list":         descSASLResponse,
	"amqp:sasl-outcome:list":          descSASLOutcome,
	"amqp:header:list":                descHeader,
	"amqp:delivery-annotations:map":   descDeliveryAnnotations,
	"amqp:message-annotations:map":    descMessageAnnotations,
	"amqp:properties:list":            descProperties,
	"amqp:application-properties:map": descApplicationProperties,
	"amqp:data:binary":                descData,
	"amqp:amqp-sequence:list":         descAMQPSequence,
	"amqp:amqp-value:*":               descAMQPValue,
	"amqp:footer:map":                 descFooter,
}

// descriptorNames names descriptor codes in error messages.
var descriptorNames = map[uint64]string{
	descOpen: "open", descBegin: "begin", descAttach: "attach", descFlow: "flow",
	descTransfer: "transfer", descDisposition: "disposition", descDetach: "detach",
	descEnd: "end", descClose: "close", descError: "error",
	descReceived: "received", descAccepted: "accepted", descRejected: "rejected",
	descReleased: "released", descModified: "modified",
	descSource: "source", descTarget: "target", descCoordinator: "coordinator",
	descSASLMechanisms: "sasl-mechanisms", descSASLInit: "sasl-init",
	descSASLChallenge: "sasl-challenge", descSASLResponse: "sasl-response",
	descSASLOutcome: "sasl-outcome",
	descHeader:      "header", descDeliveryAnnotations: "delivery-annotations",
	descMessageAnnotations: "message-annotations", descProperties: "properties",
	descApplicationProperties: "application-properties", descData: "data",
	descAMQPSequence: "amqp-sequence", descAMQPValue: "amqp-value", descFooter: "footer",
}
