package wire

import "github.com/peeklock/peeklock/broker"

// SplitBatch splits the payload of a batch delivery (message format
// MessageFormatBatch) into its messages: each data section of the outer
// message holds one encoded message. Other outer sections (header,
// annotations, properties) are skipped. The returned slices alias b.
// Errors are *broker.Error with CodeInvalid wrapping a *DecodeError.
func SplitBatch(b []byte) ([][]byte, error) {
	d := Decoder{buf: b}
	var parts [][]byte
	for d.Len() > 0 {
		start := d.off
		code, sym, err := d.ReadDescriptor()
		if err != nil {
			return nil, batchError(err)
		}
		switch {
		case sym != "":
			d.off = start
			return nil, batchError(d.errorf("unknown message section %s", sym))
		case code == descData:
			data, err := d.ReadBinary()
			if err != nil {
				return nil, batchError(err)
			}
			parts = append(parts, data)
		case code == descHeader || code == descProperties:
			d.off = start
			if _, err := d.ReadAny(); err != nil {
				return nil, batchError(err)
			}
		case code == descDeliveryAnnotations || code == descMessageAnnotations ||
			code == descApplicationProperties || code == descFooter:
			if _, err := d.ReadMap(); err != nil {
				return nil, batchError(err)
			}
		default:
			d.off = start
			return nil, batchError(d.errorf("batch with a %s section: want data sections", descriptorName(code, "")))
		}
	}
	if len(parts) == 0 {
		return nil, batchError(&DecodeError{Offset: len(b), Msg: "batch without data sections"})
	}
	return parts, nil
}

func batchError(err error) error {
	return &broker.Error{Code: broker.CodeInvalid, Message: "malformed AMQP batch: " + err.Error(), Err: err}
}
