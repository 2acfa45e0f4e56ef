package wire

// AppendAMQPValue appends an amqp-value body section holding v: the form
// broker.Message.Body takes for BodyValue. Management responses build their
// bodies with it.
func AppendAMQPValue(b []byte, v any) ([]byte, error) {
	start := len(b)
	b, err := AppendValue(AppendDescriptor(b, descAMQPValue), v)
	if err != nil {
		return b[:start], err
	}
	return b, nil
}

// DecodeAMQPValue returns the value of the amqp-value section that a
// BodyValue body holds (such as a management request's map). Binary values
// in the result alias body.
func DecodeAMQPValue(body []byte) (any, error) {
	d := Decoder{buf: body}
	start := d.off
	code, sym, err := d.ReadDescriptor()
	if err != nil {
		return nil, err
	}
	if code != descAMQPValue || sym != "" {
		d.off = start
		return nil, d.errorf("%s where an amqp-value section was expected", descriptorName(code, sym))
	}
	v, err := d.ReadAny()
	if err != nil {
		return nil, err
	}
	if d.Len() != 0 {
		return nil, d.errorf("%d bytes after the amqp-value section", d.Len())
	}
	return v, nil
}
