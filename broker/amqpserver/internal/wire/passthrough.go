package wire

// The parts of a message that Service Bus passes through without
// interpreting them (broker.Passthrough): the decoder collects the
// annotation entries it does not know, the encoder merges them back after
// its own.

// entryCollector gathers map entries, encoded, into one map.
type entryCollector struct {
	buf   []byte // entries only
	pairs int
}

// add appends the entry whose string or symbol key (constructor code) is
// key and whose value is the encoded value raw.
func (c *entryCollector) add(key []byte, code byte, raw []byte) {
	if code == codeSym8 || code == codeSym32 {
		c.buf = AppendSymbol(c.buf, Symbol(key))
	} else {
		c.buf = AppendString(c.buf, string(key))
	}
	c.buf = append(c.buf, raw...)
	c.pairs++
}

// collectEntry consumes the value at d and adds the entry to c. Entries
// with other keys than strings and symbols (code 0: the key is skipped
// already), which the AMQP specification reserves, are dropped.
func (c *entryCollector) collectEntry(d *Decoder, key []byte, code byte) error {
	start := d.off
	if err := d.Skip(); err != nil {
		return err
	}
	if code != 0 {
		c.add(key, code, d.buf[start:d.off])
	}
	return nil
}

// encoded returns the entries as an encoded map, or nil when there are none.
func (c *entryCollector) encoded() []byte {
	if c.pairs == 0 {
		return nil
	}
	b, start := beginCompound(make([]byte, 0, len(c.buf)+9), codeMap32)
	b = append(b, c.buf...)
	return endCompound(b, start, 2*c.pairs, codeMap8, codeMap32)
}

// mapEntries checks that raw is one encoded map and nothing else, and
// returns its entries (aliasing raw) and their number. A raw that is not
// (from a corrupt store, or a client that filled it by hand) gives ok
// false: the encoder then leaves it out rather than send bytes a receiver
// cannot decode.
func mapEntries(raw []byte) (entries []byte, pairs int, ok bool) {
	if len(raw) == 0 {
		return nil, 0, false
	}
	d := Decoder{buf: raw}
	pairs, end, err := d.readMapHeader()
	if err != nil || end != len(raw) {
		return nil, 0, false
	}
	start := d.off
	for range 2 * pairs {
		if d.Skip() != nil || d.off > end {
			return nil, 0, false
		}
	}
	if d.off != end {
		return nil, 0, false
	}
	return raw[start:end], pairs, true
}
