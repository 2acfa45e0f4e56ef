package ui

import (
	"encoding/hex"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/peeklock/peeklock/broker"
	"github.com/peeklock/peeklock/themes"
)

// maxTreeNodes bounds the lines of an AMQP tree.
const maxTreeNodes = 2000

// renderAMQP decodes the amqp-value or amqp-sequence sections of a body and
// renders them as a tree with the AMQP type of every leaf.
func renderAMQP(st *themes.Styles, kind broker.BodyKind, body []byte) ([]string, error) {
	var am amqp.Message
	if err := am.UnmarshalBinary(body); err != nil {
		return nil, err
	}
	t := &tree{st: st}
	switch {
	case kind == broker.BodySequence || am.Sequence != nil:
		for i, seq := range am.Sequence {
			t.node("", "sequence "+strconv.Itoa(i), []any(seq), i == len(am.Sequence)-1)
		}
		if len(am.Sequence) == 0 {
			t.lines = append(t.lines, st.Faint.Render("(no sequence sections)"))
		}
	default:
		t.node("", "value", am.Value, true)
	}
	if t.cut {
		t.lines = append(t.lines, st.Faint.Render("… more not shown"))
	}
	return t.lines, nil
}

type tree struct {
	st    *themes.Styles
	lines []string
	cut   bool
}

// node renders v under the label with the tree prefix of its parent.
func (t *tree) node(prefix, label string, v any, last bool) {
	if len(t.lines) >= maxTreeNodes {
		t.cut = true
		return
	}
	branch, child := "├─ ", "│  "
	if last {
		branch, child = "└─ ", "   "
	}
	if prefix == "" && label != "" && (label == "value" || strings.HasPrefix(label, "sequence")) {
		branch, child = "", ""
	}
	head := t.st.Faint.Render(prefix+branch) + t.st.JSONKey.Render(Sanitize(label))
	rv := reflect.ValueOf(v)
	switch {
	case v == nil:
		t.lines = append(t.lines, head+": "+t.st.JSONLiteral.Render("null"))
	case isBytes(v):
		b := rv.Bytes()
		t.lines = append(t.lines, head+": "+t.st.JSONString.Render(Sanitize(shortHex(b)))+t.st.Faint.Render(" (binary, "+strconv.Itoa(len(b))+" bytes)"))
	case rv.Kind() == reflect.Map:
		keys := rv.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i].Interface()) < fmt.Sprint(keys[j].Interface()) })
		t.lines = append(t.lines, head+t.st.Faint.Render(" (map, "+strconv.Itoa(len(keys))+" entries)"))
		for i, k := range keys {
			t.node(prefix+child, keyLabel(k.Interface()), rv.MapIndex(k).Interface(), i == len(keys)-1)
		}
	case rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array && !isUUID(v):
		kind := "list"
		if rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() != reflect.Interface {
			kind = "array of " + amqpType(reflect.Zero(rv.Type().Elem()).Interface())
		}
		t.lines = append(t.lines, head+t.st.Faint.Render(" ("+kind+", "+strconv.Itoa(rv.Len())+")"))
		for i := 0; i < rv.Len(); i++ {
			t.node(prefix+child, "["+strconv.Itoa(i)+"]", rv.Index(i).Interface(), i == rv.Len()-1)
		}
	default:
		t.lines = append(t.lines, head+": "+leaf(t.st, v)+t.st.Faint.Render(" ("+amqpType(v)+")"))
	}
}

func isBytes(v any) bool {
	_, ok := v.([]byte)
	return ok
}

func isUUID(v any) bool {
	_, ok := v.(amqp.UUID)
	return ok
}

func keyLabel(k any) string {
	switch k := k.(type) {
	case string:
		return strconv.Quote(k)
	case amqp.Symbol:
		return ":" + string(k)
	}
	return fmt.Sprint(k)
}

func shortHex(b []byte) string {
	const max = 32
	if len(b) > max {
		return hex.EncodeToString(b[:max]) + "…"
	}
	return hex.EncodeToString(b)
}

// leaf renders a scalar value.
func leaf(st *themes.Styles, v any) string {
	switch v := v.(type) {
	case string:
		return st.JSONString.Render(Sanitize(strconv.Quote(v)))
	case amqp.Symbol:
		return st.JSONString.Render(Sanitize(":" + string(v)))
	case bool:
		return st.JSONLiteral.Render(strconv.FormatBool(v))
	case time.Time:
		return st.JSONNumber.Render(v.UTC().Format(time.RFC3339Nano))
	case amqp.UUID:
		return st.JSONNumber.Render(v.String())
	case fmt.Stringer:
		return st.Text.Render(Sanitize(v.String()))
	}
	return st.JSONNumber.Render(Sanitize(fmt.Sprint(v)))
}

// amqpType names the AMQP type of a decoded value.
func amqpType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case amqp.Symbol:
		return "symbol"
	case bool:
		return "boolean"
	case int8:
		return "byte"
	case uint8:
		return "ubyte"
	case int16:
		return "short"
	case uint16:
		return "ushort"
	case int32:
		return "int"
	case uint32:
		return "uint"
	case int64:
		return "long"
	case uint64:
		return "ulong"
	case float32:
		return "float"
	case float64:
		return "double"
	case time.Time:
		return "timestamp"
	case amqp.UUID:
		return "uuid"
	case []byte:
		return "binary"
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", v), "encoding.")
}
