package wire

// Skip passes over one value of any type without decoding it. Compound
// values are skipped by their size fields; their contents are not checked.
func (d *Decoder) Skip() error {
	start := d.off
	code, err := d.readCode()
	if err != nil {
		return err
	}
	if code == codeDescribed {
		if err := d.enter(); err != nil {
			return err
		}
		defer d.leave()
		if _, err := d.readDescriptorValue(); err != nil {
			return err
		}
		return d.Skip()
	}
	if w := fixedWidth(code); w >= 0 {
		if err := d.need(w); err != nil {
			return err
		}
		d.off += w
		return nil
	}
	switch code {
	case codeVbin8, codeStr8, codeSym8, codeVbin32, codeStr32, codeSym32:
		n, err := d.readLength(code&0xf0 == 0xa0)
		if err != nil {
			return err
		}
		d.off += n
		return nil
	case codeList8, codeList32, codeMap8, codeMap32, codeArray8, codeArray32:
		_, end, err := d.readCompoundHeader(code)
		if err != nil {
			return err
		}
		d.off = end
		return nil
	}
	d.off = start
	return d.errorf("unknown constructor 0x%02x", code)
}

// readMapHeader reads a map's constructor and header and returns the
// number of entries (pairs) and the offset just past the map.
func (d *Decoder) readMapHeader() (pairs, end int, err error) {
	start := d.off
	code, err := d.readCode()
	if err != nil {
		return 0, 0, err
	}
	if code != codeMap8 && code != codeMap32 {
		return 0, 0, d.wrongType(start, code, "a map")
	}
	count, end, err := d.readCompoundHeader(code)
	if err != nil {
		return 0, 0, err
	}
	if count%2 != 0 {
		return 0, 0, d.errorf("map with an odd element count %d", count)
	}
	if count > end-d.off {
		return 0, 0, d.errorf("map of %d elements in %d bytes", count, end-d.off)
	}
	return count / 2, end, nil
}

// readKeyBytes reads a string or symbol and returns its bytes, aliasing the
// input, and its constructor; for other types (such as the ulong keys the
// spec reserves in annotation maps) it returns code 0 and consumes nothing.
func (d *Decoder) readKeyBytes() (key []byte, code byte, err error) {
	if d.off >= len(d.buf) {
		return nil, 0, d.errorf("unexpected end of input")
	}
	code = d.buf[d.off]
	switch code {
	case codeStr8, codeStr32, codeSym8, codeSym32:
		d.off++
		n, err := d.readLength(code&0xf0 == 0xa0)
		if err != nil {
			return nil, 0, err
		}
		key = d.buf[d.off : d.off+n : d.off+n]
		d.off += n
		return key, code, nil
	}
	return nil, 0, nil
}
