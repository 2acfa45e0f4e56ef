package broker

import (
	"bytes"
	"slices"
	"testing"
)

func TestSetSectionsAndSections(t *testing.T) {
	for _, in := range [][][]byte{
		nil,
		{[]byte("one")},
		{[]byte("Hello World"), []byte("And another message!")},
		{{}, []byte("x"), nil},
	} {
		var m Message
		m.BodyKind = BodyValue
		m.SetSections(in)
		if m.BodyKind != BodyData {
			t.Fatalf("%q: body kind %s", in, m.BodyKind)
		}
		if !bytes.Equal(m.Body, bytes.Join(in, nil)) {
			t.Fatalf("%q: body %q", in, m.Body)
		}
		if (len(in) > 1) != (m.DataSections != nil) {
			t.Fatalf("%q: DataSections %v", in, m.DataSections)
		}
		if err := m.CheckDataSections(); err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		got := m.Sections()
		want := in
		if len(in) == 0 {
			want = [][]byte{nil}
		}
		if len(got) != len(want) {
			t.Fatalf("%q: sections %q", in, got)
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%q: section %d is %q", in, i, got[i])
			}
		}
	}
}

func TestSectionsDoNotShareCapacity(t *testing.T) {
	var m Message
	m.SetSections([][]byte{[]byte("ab"), []byte("cd")})
	s := m.Sections()
	_ = append(s[0], 'X') // must not overwrite "c"
	if string(m.Body) != "abcd" {
		t.Fatalf("appending to a section changed the body to %q", m.Body)
	}
}

func TestCheckDataSections(t *testing.T) {
	for _, c := range []struct {
		m    Message
		want string
	}{
		{Message{Body: []byte("abc"), DataSections: []int{1, 1}}, "invalid request: the data sections hold 2 bytes, but the body has 3"},
		{Message{Body: []byte("abc"), DataSections: []int{2, 2}}, "invalid request: data section 1 (2 bytes) runs past the end of the 3-byte body"},
		{Message{Body: []byte("abc"), DataSections: []int{-1, 4}}, "invalid request: data section 0 has a negative length (-1)"},
		{Message{Body: []byte("abc"), DataSections: []int{3}}, "invalid request: DataSections lists 1 sections: it is set only for two or more"},
		{Message{Body: []byte("abc"), DataSections: []int{}}, "invalid request: DataSections lists 0 sections: it is set only for two or more"},
		{Message{Body: []byte("ab"), BodyKind: BodyValue, DataSections: []int{1, 1}}, "invalid request: an amqp-value body has no data sections, but DataSections is set"},
	} {
		err := c.m.CheckDataSections()
		if CodeOf(err) != CodeInvalid || err.Error() != c.want {
			t.Errorf("%v: %v, want %s", c.m.DataSections, err, c.want)
		}
		// Lengths that do not describe the body are not trusted.
		if s := c.m.Sections(); len(s) != 1 || !bytes.Equal(s[0], c.m.Body) {
			t.Errorf("%v: sections %q, want the body whole", c.m.DataSections, s)
		}
	}
}

func TestCloneCopiesDataSections(t *testing.T) {
	m := &Message{}
	m.SetSections([][]byte{[]byte("a"), []byte("b")})
	c := m.Clone()
	c.DataSections[0] = 2
	if !slices.Equal(m.DataSections, []int{1, 1}) {
		t.Fatalf("changing the clone changed the original: %v", m.DataSections)
	}
	if s := m.CopyForSend(); !slices.Equal(s.DataSections, []int{1, 1}) {
		t.Fatalf("CopyForSend dropped the sections: %v", s.DataSections)
	}
}
