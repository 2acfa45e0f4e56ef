package broker

// Sections returns the data sections of a BodyData body as the sender framed
// them: Body cut at the lengths in DataSections. A body without
// DataSections, or whose DataSections does not describe it (see
// CheckDataSections), is one section. The sections alias Body.
func (m *Message) Sections() [][]byte {
	if m.CheckDataSections() != nil || len(m.DataSections) == 0 {
		return [][]byte{m.Body}
	}
	out := make([][]byte, len(m.DataSections))
	off := 0
	for i, n := range m.DataSections {
		out[i] = m.Body[off : off+n : off+n]
		off += n
	}
	return out
}

// SetSections sets Body to the sections joined and DataSections to their
// lengths (nil for fewer than two sections), with BodyKind BodyData. Body
// is a new slice; no section is retained.
func (m *Message) SetSections(sections [][]byte) {
	m.BodyKind = BodyData
	m.DataSections = nil
	switch len(sections) {
	case 0:
		m.Body = nil
		return
	case 1:
		m.Body = append([]byte(nil), sections[0]...)
		return
	}
	n := 0
	for _, s := range sections {
		n += len(s)
	}
	m.Body = make([]byte, 0, n)
	m.DataSections = make([]int, len(sections))
	for i, s := range sections {
		m.Body = append(m.Body, s...)
		m.DataSections[i] = len(s)
	}
}

// CheckDataSections returns a CodeInvalid error when DataSections is set but
// does not describe Body: on a body kind other than BodyData, with fewer than
// two sections, with a negative length, or with lengths that do not add up
// to len(Body).
func (m *Message) CheckDataSections() error {
	if m.DataSections == nil {
		return nil
	}
	if m.BodyKind != BodyData {
		return Errorf(CodeInvalid, "an %s body has no data sections, but DataSections is set", m.BodyKind)
	}
	if len(m.DataSections) < 2 {
		return Errorf(CodeInvalid, "DataSections lists %d sections: it is set only for two or more", len(m.DataSections))
	}
	total := 0
	for i, n := range m.DataSections {
		if n < 0 {
			return Errorf(CodeInvalid, "data section %d has a negative length (%d)", i, n)
		}
		if n > len(m.Body)-total {
			return Errorf(CodeInvalid, "data section %d (%d bytes) runs past the end of the %d-byte body", i, n, len(m.Body))
		}
		total += n
	}
	if total != len(m.Body) {
		return Errorf(CodeInvalid, "the data sections hold %d bytes, but the body has %d", total, len(m.Body))
	}
	return nil
}
