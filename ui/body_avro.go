package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/hamba/avro/v2/ocf"
	"github.com/peeklock/peeklock/themes"
)

// maxAvroRecords bounds the records of an Avro container that are shown.
const maxAvroRecords = 200

// renderAvro decodes an Avro object container file: its schema, then each
// record as highlighted JSON.
func renderAvro(st *themes.Styles, body []byte) ([]string, error) {
	dec, err := ocf.NewDecoder(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	lines := []string{st.Label.Render("schema")}
	schema := dec.Schema().String()
	var pretty bytes.Buffer
	if json.Indent(&pretty, []byte(schema), "", "  ") == nil {
		schema = pretty.String()
	}
	for _, l := range strings.Split(SanitizeMultiline(schema), "\n") {
		lines = append(lines, "  "+st.Faint.Render(l))
	}
	n := 0
	for dec.HasNext() {
		if n == maxAvroRecords {
			lines = append(lines, st.Faint.Render("… more records not shown"))
			break
		}
		var rec any
		if err := dec.Decode(&rec); err != nil {
			return nil, fmt.Errorf("record %d: %w", n, err)
		}
		js, err := json.Marshal(jsonable(rec))
		if err != nil {
			js = []byte(strconv.Quote(fmt.Sprint(rec)))
		}
		lines = append(lines, st.Label.Render("record "+strconv.Itoa(n)))
		for _, l := range renderJSON(st, js) {
			lines = append(lines, "  "+l)
		}
		n++
	}
	if err := dec.Error(); err != nil {
		return nil, err
	}
	if n == 0 {
		lines = append(lines, st.Faint.Render("(no records)"))
	}
	return lines, nil
}

// jsonable turns decoded Avro values into values encoding/json accepts
// (maps with non-string keys do not occur in Avro; bytes become base64 as
// usual, and other values pass through).
func jsonable(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = jsonable(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = jsonable(e)
		}
		return out
	}
	return v
}
