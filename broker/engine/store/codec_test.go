package store

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/peeklock/peeklock/broker"
)

// utc returns a time in UTC without a monotonic reading, as decoding
// returns it.
func utc(sec, nsec int64) time.Time { return time.Unix(sec, nsec).UTC() }

// allTypesProps holds one property of every storable type.
func allTypesProps() map[string]any {
	return map[string]any{
		"nil":      nil,
		"string":   "héllo",
		"empty":    "",
		"true":     true,
		"false":    false,
		"int8":     int8(math.MinInt8),
		"int16":    int16(math.MinInt16),
		"int32":    int32(math.MaxInt32),
		"int64":    int64(math.MinInt64),
		"uint8":    uint8(math.MaxUint8),
		"uint16":   uint16(math.MaxUint16),
		"uint32":   uint32(math.MaxUint32),
		"uint64":   uint64(math.MaxUint64),
		"float32":  float32(-1.5),
		"float64":  math.Inf(-1),
		"time":     utc(1700000000, 123456789),
		"zerotime": time.Time{},
		"oldtime":  utc(-62135596800+1, 1), // outside the int64-nanosecond range
		"duration": -90 * time.Second,
		"bytes":    []byte{0, 1, 2, 0xff},
		"nobytes":  []byte(nil),
		"nonebyte": []byte{},
		"token":    broker.LockToken(uuid.MustParse("0f8fad5b-d9cb-469f-a165-70867728950e")),
		"uuid":     uuid.MustParse("7c9e6679-7425-40de-944b-e07fc1f90ae7"),
	}
}

// fullMessage sets every field of a message.
func fullMessage() *broker.Message {
	return &broker.Message{
		MessageID:              "id-1",
		ContentType:            "application/json",
		CorrelationID:          "corr",
		Subject:                "subject",
		To:                     "to",
		ReplyTo:                "reply",
		ReplyToSessionID:       "reply-session",
		SessionID:              "session",
		PartitionKey:           "pk",
		ViaPartitionKey:        "via",
		TimeToLive:             time.Hour,
		ScheduledEnqueueTime:   utc(1800000000, 5),
		ApplicationProperties:  allTypesProps(),
		Body:                   []byte(`{"a":1}`),
		BodyKind:               broker.BodyValue,
		SequenceNumber:         42,
		EnqueuedSequenceNumber: 7,
		EnqueuedTime:           utc(1700000000, 1),
		ExpiresAt:              utc(1700003600, 1),
		LockedUntil:            utc(1700000030, 999999999),
		LockToken:              broker.LockToken(uuid.MustParse("16fd2706-8baf-433b-82eb-8c7fada847da")),
		DeliveryCount:          3,
		DeadLetterSource:       "orders",
		State:                  broker.StateDeferred,
		Size:                   1234,
	}
}

func TestMessageRoundTrip(t *testing.T) {
	cases := map[string]*broker.Message{
		"full":           fullMessage(),
		"empty":          {},
		"empty body":     {Body: []byte{}, ApplicationProperties: map[string]any{}},
		"negatives":      {SequenceNumber: -1, Size: -5, TimeToLive: -time.Second, EnqueuedTime: utc(-1, 0)},
		"data sections":  {Body: []byte("Hello WorldAnd another message!"), DataSections: []int{11, 20}, Size: 31},
		"empty sections": {Body: []byte{}, DataSections: []int{0, 0, 0}},
		"passthrough": {AMQP: &broker.Passthrough{Durable: true, Priority: 0, HasPriority: true,
			MessageAnnotations: []byte{0xc1, 0x01, 0x00}, Footer: []byte{}}},
		"durable only":  {AMQP: &broker.Passthrough{Durable: true}},
		"encoding only": {AMQP: &broker.Passthrough{ContentEncoding: "gzip"}},
		"empty session": {SessionIDSet: true, Body: []byte("in session \"\"")},
	}
	for name, m := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := appendMessage(nil, m)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeMessage(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, m) {
				t.Fatalf("round trip changed the message:\n got %#v\nwant %#v", got, m)
			}
		})
	}
}

func TestMessageEncodingIsCompact(t *testing.T) {
	b, err := appendMessage(nil, &broker.Message{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{messageVersion, 0}; !bytes.Equal(b, want) {
		t.Fatalf("empty message encodes as %x, want %x", b, want)
	}
	m := &broker.Message{MessageID: "x", Body: make([]byte, 1024), SequenceNumber: 1, EnqueuedTime: utc(1700000000, 0), Size: 1025}
	b, err = appendMessage(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	// version 1 + bits 4 + id 2 + body 2+1024 + seq 1 + time 5+1 + size 2
	if len(b) != 1042 {
		t.Fatalf("message encodes in %d bytes, want 1042", len(b))
	}
}

func TestMessageUnknownPropertyType(t *testing.T) {
	m := &broker.Message{ApplicationProperties: map[string]any{"ok": "x", "z": struct{}{}, "bad": 1}}
	dst := []byte("prefix")
	out, err := appendMessage(dst, m)
	if broker.CodeOf(err) != broker.CodeInvalid {
		t.Fatalf("err = %v, want CodeInvalid", err)
	}
	if want := `invalid request: application property "bad" has unsupported type int`; err.Error() != want {
		t.Fatalf("err = %q, want %q", err, want)
	}
	if string(out) != "prefix" {
		t.Fatalf("dst changed to %q", out)
	}
}

// TestMessageDecodeTruncated decodes every prefix of a valid encoding: each
// is an ErrCorrupt error, never a panic.
func TestMessageDecodeTruncated(t *testing.T) {
	b, err := appendMessage(nil, fullMessage())
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(b) {
		_, err := decodeMessage(b[:n])
		if !errors.Is(err, ErrCorrupt) || broker.CodeOf(err) != broker.CodeUnknown {
			t.Fatalf("prefix of %d bytes: err = %v, want ErrCorrupt", n, err)
		}
	}
	if _, err := decodeMessage(append(b, 0)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("trailing byte: err = %v, want ErrCorrupt", err)
	}
}

func TestMessageDecodeCorrupt(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", []byte{}, "truncated"},
		{"bad version", []byte{4, 0}, "unknown message version 4"},
		{"version 0", []byte{0, 0}, "unknown message version 0"},
		{"sections in version 1", []byte{1, 0x80, 0x80, 0x80, 0x10}, "unknown field bits 0x2000000"},
		{"unknown bits", []byte{2, 0x80, 0x80, 0x80, 0x80, 0x01}, "unknown field bits 0x10000000"},
		{"passthrough in version 1", []byte{1, 0x80, 0x80, 0x80, 0x20}, "unknown field bits 0x4000000"},
		// AMQP (bit 26): flags, priority, three nil-able byte slices
		{"passthrough flags", []byte{2, 0x80, 0x80, 0x80, 0x20, 8, 0, 0, 0, 0}, "unknown passthrough flags 0x8"},
		{"empty content-encoding", []byte{2, 0x80, 0x80, 0x80, 0x20, 4, 0, 0, 0, 0, 0}, "an empty content-encoding"},
		{"priority without flag", []byte{2, 0x80, 0x80, 0x80, 0x20, 1, 9, 0, 0, 0}, "a priority (9) without its flag"},
		{"empty passthrough", []byte{2, 0x80, 0x80, 0x80, 0x20, 0, 0, 0, 0, 0}, "an empty passthrough"},
		{"passthrough truncated", []byte{2, 0x80, 0x80, 0x80, 0x20, 2, 9, 0, 3, 1}, "count 2 beyond the end"},
		// body "abc" (bit 13), then DataSections (bit 25)
		{"sections short", []byte{2, 0x80, 0xc0, 0x80, 0x10, 3, 'a', 'b', 'c', 2, 1, 1}, "the data sections hold 2 bytes, but the body has 3"},
		{"sections long", []byte{2, 0x80, 0xc0, 0x80, 0x10, 3, 'a', 'b', 'c', 2, 2, 2}, "data section 1 (2 bytes) runs past the end of the 3-byte body"},
		{"section beyond body", []byte{2, 0x80, 0xc0, 0x80, 0x10, 3, 'a', 'b', 'c', 2, 9, 0}, "data section of 9 bytes in a body of 3"},
		{"one section", []byte{2, 0x80, 0xc0, 0x80, 0x10, 3, 'a', 'b', 'c', 1, 3}, "DataSections lists 1 sections: it is set only for two or more"},
		{"section count", []byte{2, 0x80, 0xc0, 0x80, 0x10, 3, 'a', 'b', 'c', 0x7f, 1}, "count 127 beyond the end"},
		// body "ab" and BodyKind (bit 14) amqp-value, with sections
		{"sections of a value", []byte{2, 0x80, 0xc0, 0x81, 0x10, 2, 'a', 'b', 1, 2, 1, 1}, "an amqp-value body has no data sections, but DataSections is set"},
		{"long string", []byte{1, 1, 0x7f, 'a'}, "length 127 beyond the end"},
		{"huge prop count", []byte{1, 0x80, 0x20, 0xff, 0xff, 0xff, 0xff, 0x0f}, "count 4294967294 beyond the end"},
		{"unknown tag", []byte{1, 0x80, 0x20, 2, 1, 'k', 99}, "unknown property type tag 99"},
		{"keys out of order", []byte{1, 0x80, 0x20, 3, 1, 'b', 0, 1, 'a', 0}, `property keys out of order at "a"`},
		{"duplicate keys", []byte{1, 0x80, 0x20, 3, 1, 'a', 0, 1, 'a', 0}, `property keys out of order at "a"`},
		{"uint16 range", []byte{1, 0x80, 0x20, 2, 1, 'k', tagUint16, 0x80, 0x80, 0x04}, "uint16 65536 out of range"},
		{"nanoseconds", []byte{1, 0x80, 0x10, 0, 0x80, 0x94, 0xeb, 0xdc, 0x03}, "nanoseconds 1000000000 out of range"},
		{"delivery count", []byte{1, 0x80, 0x80, 0x80, 0x01, 0x80, 0x80, 0x80, 0x80, 0x10}, "value 4294967296 out of range"},
		{"overflow varint", []byte{1, 0x80, 0x80, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, "bad varint"},
		{"trailing", []byte{1, 0, 0}, "1 trailing bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := decodeMessage(c.data)
			if !errors.Is(err, ErrCorrupt) || m != nil {
				t.Fatalf("decode = %v, %v; want nil, ErrCorrupt", m, err)
			}
			if want := "error: corrupt stored message: " + c.want; err.Error() != want {
				t.Fatalf("err = %q, want %q", err, want)
			}
		})
	}
}

func TestMetaRoundTrip(t *testing.T) {
	for _, m := range []Meta{
		{},
		{State: broker.StateScheduled, DeliveryCount: math.MaxUint32, EnqueuedTime: math.MinInt64, ExpiresAt: math.MaxInt64, ScheduledTime: 5, Size: 1 << 40, SessionID: "s", MessageID: "m"},
	} {
		b := appendMeta(nil, &m)
		got, err := decodeMeta(b)
		if err != nil {
			t.Fatal(err)
		}
		if got != m {
			t.Fatalf("round trip: got %+v, want %+v", got, m)
		}
		for n := range len(b) {
			if _, err := decodeMeta(b[:n]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("prefix of %d bytes: err = %v, want ErrCorrupt", n, err)
			}
		}
	}
	if got := len(appendMeta(nil, &Meta{EnqueuedTime: 1700000000e9, Size: 1100, MessageID: "0f8fad5b-d9cb-469f-a165-70867728950e"})); got != 54 {
		t.Fatalf("typical meta encodes in %d bytes, want 54", got)
	}
}

// fullEntity sets every stored field of an entity record.
func fullEntity() EntityRecord {
	return EntityRecord{ID: 7, Entity: broker.Entity{
		Path: "events/Subscriptions/audit",
		Kind: broker.KindSubscription,
		Settings: broker.EntitySettings{
			LockDuration:                        time.Minute,
			MaxDeliveryCount:                    3,
			DefaultMessageTimeToLive:            broker.MaxTimeToLive,
			DeadLetteringOnMessageExpiration:    true,
			RequiresDuplicateDetection:          true,
			DuplicateDetectionHistoryTimeWindow: 20 * time.Second,
			RequiresSession:                     true,
			ForwardTo:                           "fwd",
			ForwardDeadLetteredMessagesTo:       "dlq-fwd",
			MaxSizeInMegabytes:                  2048,
			MaxMessageSizeInKilobytes:           100,
			ForwardToURI:                        "https://ns.example/fwd",
			ForwardDeadLetteredMessagesToURI:    "sb://ns.example/dlq-fwd",
			Status:                              broker.StatusReceiveDisabled,
			AutoDeleteOnIdle:                    7 * time.Minute,
			EnablePartitioning:                  true,
			DisableBatchedOperations:            true,
			DisableSupportOrdering:              true,
			DisableFilterExceptionDeadLettering: true,
		},
		AuthorizationRules: []broker.AuthorizationRule{
			{KeyName: "sender", PrimaryKey: "cHJpbWFyeQ==", SecondaryKey: "c2Vjb25kYXJ5", Rights: broker.RightSend,
				CreatedTime: utc(1700000000, 1), ModifiedTime: utc(1700000001, 2)},
			{KeyName: "all", PrimaryKey: "k", Rights: broker.AllRights},
			{},
		},
		Rules: []broker.Rule{
			{Name: "$Default", CreatedAt: utc(1700000000, 5)},
			{Name: "sql", SQL: "1=1"},
			{Name: "sql action", SQL: "color = 'red' AND n > 2", Action: "SET n = n + 1"},
			{Name: "sql params", SQL: "color = @c AND n > @n AND at < @t", Action: "SET p = @p, SET d = @d",
				Parameters:       map[string]any{"@c": "red", "@n": int64(2), "@t": utc(1700000300, 7), "@f": 2.5, "@b": true, "@none": nil},
				ActionParameters: map[string]any{"@p": uint64(9), "@d": 90 * time.Second, "@u": uuid.MustParse("7c9e6679-7425-40de-944b-e07fc1f90ae7"), "@raw": []byte{1, 2}}},
			{Name: "empty params", SQL: "1=1", Action: "SET a = 1", Parameters: map[string]any{}, ActionParameters: map[string]any{}},
			{Name: "corr", Filter: &broker.CorrelationFilter{
				CorrelationID: "c", MessageID: "m", To: "t", ReplyTo: "r", Subject: "s",
				SessionID: "sid", ReplyToSessionID: "rsid", ContentType: "ct",
				Properties: map[string]any{"prop1": "value1", "n": int64(3)},
			}, CreatedAt: utc(1700000100, 0), Action: "SET sys.Label = 'routed'; REMOVE secret"},
			{Name: "empty filter", Filter: &broker.CorrelationFilter{}},
		},
		CreatedAt:    utc(1699999999, 123456789),
		UpdatedAt:    utc(1700000200, 1),
		UserMetadata: "owner: team-a; ünïcode",
	}}
}

func TestEntityRoundTrip(t *testing.T) {
	for name, rec := range map[string]EntityRecord{
		"full":     fullEntity(),
		"empty":    {},
		"no rules": {ID: math.MaxUint32, Entity: broker.Entity{Path: "q", Rules: []broker.Rule{}}},
	} {
		t.Run(name, func(t *testing.T) {
			b, err := appendEntity(nil, &rec)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeEntity(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, rec) {
				t.Fatalf("round trip:\n got %#v\nwant %#v", got, rec)
			}
			for n := range len(b) {
				if _, err := decodeEntity(b[:n]); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("prefix of %d bytes: err = %v, want ErrCorrupt", n, err)
				}
			}
		})
	}
}

func TestEntityCountsNotStored(t *testing.T) {
	rec := EntityRecord{ID: 1, Entity: broker.Entity{Path: "q", Counts: broker.Counts{Active: 5}, AccessedAt: utc(1700000000, 0)}}
	b, err := appendEntity(nil, &rec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeEntity(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Entity.Counts != (broker.Counts{}) {
		t.Fatalf("counts stored: %+v", got.Entity.Counts)
	}
	if !got.Entity.AccessedAt.IsZero() {
		t.Fatalf("AccessedAt stored: %v", got.Entity.AccessedAt)
	}
}

// version1Entity reads an entity record that the version 1 encoder (before
// timestamps and user metadata) wrote, kept in testdata.
func version1Entity(t *testing.T, name string) []byte {
	t.Helper()
	h, err := os.ReadFile(filepath.Join("testdata", "entity-v1-"+name+".hex"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(h)))
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != 1 {
		t.Fatalf("testdata %s is version %d, want 1", name, b[0])
	}
	return b
}

// version1QueueSettings are the settings of testdata's "queue" record:
// the defaults when it was written, LockDuration 30 s then (the record
// keeps it; only new entities get today's default).
func version1QueueSettings() broker.EntitySettings {
	s := broker.EntitySettings{}.Normalize()
	s.LockDuration = 30 * time.Second
	return s
}

func TestEntityVersion1StillDecodes(t *testing.T) {
	full := fullEntityWithoutActions()
	full.Entity.CreatedAt, full.Entity.UpdatedAt, full.Entity.UserMetadata = time.Time{}, time.Time{}, ""
	for i := range full.Entity.Rules {
		full.Entity.Rules[i].CreatedAt = time.Time{}
	}
	for name, want := range map[string]EntityRecord{
		"full":  full,
		"queue": {ID: 3, Entity: broker.Entity{Path: "orders", Settings: version1QueueSettings()}},
	} {
		t.Run(name, func(t *testing.T) {
			b := version1Entity(t, name)
			got, err := decodeEntity(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("decoded:\n got %#v\nwant %#v", got, want)
			}
			// Written again, it is a version 2 record that reads the same.
			b2, err := appendEntity(nil, &got)
			if err != nil {
				t.Fatal(err)
			}
			if b2[0] != entityVersion {
				t.Fatalf("re-encoded with version %d, want %d", b2[0], entityVersion)
			}
			got2, err := decodeEntity(b2)
			if err != nil || !reflect.DeepEqual(got2, want) {
				t.Fatalf("version 2 round trip: %v\n got %#v\nwant %#v", err, got2, want)
			}
			// A version 1 record with the version 2 tail appended has
			// trailing bytes.
			if _, err := decodeEntity(append(slices.Clone(b), 0, 0, 0)); err == nil || err.Error() != "error: corrupt stored entity: 3 trailing bytes" {
				t.Fatalf("version 1 with a tail: %v", err)
			}
		})
	}
}

func TestEntityVersionChecked(t *testing.T) {
	for _, v := range []byte{0, entityVersion + 1} {
		b, err := appendEntity(nil, &EntityRecord{ID: 1, Entity: broker.Entity{Path: "q"}})
		if err != nil {
			t.Fatal(err)
		}
		b[0] = v
		want := fmt.Sprintf("error: corrupt stored entity: unknown entity version %d", v)
		if _, err := decodeEntity(b); !errors.Is(err, ErrCorrupt) || err.Error() != want {
			t.Fatalf("version %d: err = %v, want %q", v, err, want)
		}
	}
	b, _ := appendEntity(nil, &EntityRecord{ID: 1, Entity: broker.Entity{Path: "q"}})
	// The record ends with CreatedAt's flag, UpdatedAt's, UserMetadata, the
	// two forwarding URIs, Status, AutoDeleteOnIdle, the version 5 flags and
	// the authorization rules' count: one byte each.
	for _, c := range []struct {
		at   int
		v    byte
		want string
	}{
		{9, 7, "bad time flag"},
		{4, 4, "unknown entity status 4"},
		{2, 0x10, "unknown setting flags 0x10"},
		{1, 2, "count 1 beyond the end"},
	} {
		b2 := slices.Clone(b)
		b2[len(b2)-c.at] = c.v
		if _, err := decodeEntity(b2); !errors.Is(err, ErrCorrupt) || err.Error() != "error: corrupt stored entity: "+c.want {
			t.Errorf("byte -%d = %d: err = %v, want %q", c.at, c.v, err, c.want)
		}
	}
	bad, _ := appendEntity(nil, &EntityRecord{ID: 1, Entity: broker.Entity{Path: "q", AuthorizationRules: []broker.AuthorizationRule{{Rights: 8}}}})
	if _, err := decodeEntity(bad); !errors.Is(err, ErrCorrupt) || err.Error() != "error: corrupt stored entity: unknown access rights 0x8" {
		t.Errorf("unknown rights: err = %v", err)
	}
}

func TestEntityUnknownFilterPropertyType(t *testing.T) {
	rec := EntityRecord{ID: 1, Entity: broker.Entity{Rules: []broker.Rule{{Name: "r", Filter: &broker.CorrelationFilter{Properties: map[string]any{"p": 1.5i}}}}}}
	_, err := appendEntity(nil, &rec)
	if want := `invalid request: rule "r" filter property "p" has unsupported type complex128`; err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

func TestEntityUnknownParameterType(t *testing.T) {
	for _, c := range []struct {
		rule broker.Rule
		want string
	}{
		{broker.Rule{Name: "f", SQL: "a = @p", Parameters: map[string]any{"@ok": "x", "@p": 1}}, `invalid request: rule "f" filter parameter "@p" has unsupported type int`},
		{broker.Rule{Name: "a", Action: "SET a = @p", ActionParameters: map[string]any{"@p": struct{}{}}}, `invalid request: rule "a" action parameter "@p" has unsupported type struct {}`},
	} {
		rec := EntityRecord{ID: 1, Entity: broker.Entity{Rules: []broker.Rule{c.rule}}}
		if _, err := appendEntity(nil, &rec); err == nil || err.Error() != c.want {
			t.Errorf("appendEntity: %v, want %q", err, c.want)
		}
		b := &Batch{}
		b.PutEntity(rec)
		if err := checkBatch(b); err == nil || err.Error() != c.want {
			t.Errorf("checkBatch: %v, want %q", err, c.want)
		}
	}
}

// FuzzDecodeMessage checks that decoding arbitrary bytes never panics, and
// that whatever decodes encodes to a fixed point: decoding the encoding of a
// decoded message and encoding again gives the same bytes.
func FuzzDecodeMessage(f *testing.F) {
	for _, m := range []*broker.Message{fullMessage(), {}, {Body: []byte("x")}, {Body: []byte("ab"), DataSections: []int{1, 0, 1}},
		{AMQP: &broker.Passthrough{HasPriority: true, Priority: 7, DeliveryAnnotations: []byte{0xc1, 0x01, 0x00}}}} {
		b, err := appendMessage(nil, m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeMessage(data)
		if err != nil {
			if m != nil || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decode = %v, %v; want nil and ErrCorrupt", m, err)
			}
			return
		}
		enc1, err := appendMessage(nil, m)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		m2, err := decodeMessage(enc1)
		if err != nil {
			t.Fatalf("decode of re-encoding: %v", err)
		}
		enc2, err := appendMessage(nil, m2)
		if err != nil {
			t.Fatalf("second re-encode: %v", err)
		}
		if !bytes.Equal(enc1, enc2) {
			t.Fatalf("encoding is not a fixed point:\n%x\n%x", enc1, enc2)
		}
	})
}

// TestEntityVersion2StillDecodes reads a record that the version 2 encoder
// (before rule actions) wrote, kept in testdata: its rules have no actions.
func TestEntityVersion2StillDecodes(t *testing.T) {
	h, err := os.ReadFile(filepath.Join("testdata", "entity-v2-full.hex"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(h)))
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != 2 {
		t.Fatalf("testdata is version %d, want 2", b[0])
	}
	want := fullEntityWithoutActions()
	got, err := decodeEntity(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded:\n got %#v\nwant %#v", got, want)
	}
	// Written again, it is a record of the current version that reads the
	// same.
	b3, err := appendEntity(nil, &got)
	if err != nil {
		t.Fatal(err)
	}
	if got3, err := decodeEntity(b3); b3[0] != entityVersion || err != nil || !reflect.DeepEqual(got3, want) {
		t.Fatalf("round trip: version %d, %v\n got %#v", b3[0], err, got3)
	}
}

// TestEntityVersion3StillDecodes reads a record that the version 3 encoder
// (before rule parameters) wrote, kept in testdata: its rules have actions
// but no parameters.
func TestEntityVersion3StillDecodes(t *testing.T) {
	h, err := os.ReadFile(filepath.Join("testdata", "entity-v3-full.hex"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(h)))
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != 3 {
		t.Fatalf("testdata is version %d, want 3", b[0])
	}
	want := fullEntityWithoutParameters()
	got, err := decodeEntity(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded:\n got %#v\nwant %#v", got, want)
	}
	// Written again, it is a record of the current version that reads the
	// same.
	b4, err := appendEntity(nil, &got)
	if err != nil {
		t.Fatal(err)
	}
	if got4, err := decodeEntity(b4); b4[0] != entityVersion || err != nil || !reflect.DeepEqual(got4, want) {
		t.Fatalf("round trip: version %d, %v\n got %#v", b4[0], err, got4)
	}
	// The version 3 record with a version 4 tail (no parameters: two zero
	// bytes a rule) appended has trailing bytes.
	tail := make([]byte, 2*len(want.Entity.Rules))
	if _, err := decodeEntity(append(slices.Clone(b), tail...)); err == nil || err.Error() != fmt.Sprintf("error: corrupt stored entity: %d trailing bytes", len(tail)) {
		t.Fatalf("version 3 with a tail: %v", err)
	}
}

// fullEntityV4 is fullEntity as the version 4 encoder wrote it: without
// the settings and authorization rules that version 5 added, which read as
// their defaults.
func fullEntityV4() EntityRecord {
	rec := fullEntity()
	st := &rec.Entity.Settings
	st.ForwardToURI, st.ForwardDeadLetteredMessagesToURI = "", ""
	st.Status, st.AutoDeleteOnIdle = broker.StatusActive, broker.MaxTimeToLive
	st.EnablePartitioning, st.DisableBatchedOperations = false, false
	st.DisableSupportOrdering, st.DisableFilterExceptionDeadLettering = false, false
	rec.Entity.AuthorizationRules = nil
	return rec
}

// TestEntityVersion4StillDecodes reads a record that the version 4 encoder
// (before entity status, auto-delete, partitioning and authorization rules)
// wrote, kept in testdata: those read as their defaults.
func TestEntityVersion4StillDecodes(t *testing.T) {
	h, err := os.ReadFile(filepath.Join("testdata", "entity-v4-full.hex"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(h)))
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != 4 {
		t.Fatalf("testdata is version %d, want 4", b[0])
	}
	want := fullEntityV4()
	got, err := decodeEntity(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded:\n got %#v\nwant %#v", got, want)
	}
	b5, err := appendEntity(nil, &got)
	if err != nil {
		t.Fatal(err)
	}
	if got5, err := decodeEntity(b5); b5[0] != 5 || err != nil || !reflect.DeepEqual(got5, want) {
		t.Fatalf("version 5 round trip: version %d, %v\n got %#v", b5[0], err, got5)
	}
	// The version 4 record with a version 5 tail appended has trailing
	// bytes.
	if _, err := decodeEntity(append(slices.Clone(b), 0, 0, 0, 0, 0, 0)); err == nil || err.Error() != "error: corrupt stored entity: 6 trailing bytes" {
		t.Fatalf("version 4 with a tail: %v", err)
	}
}

// fullEntityWithoutParameters is fullEntity as encoders before version 4
// wrote it: without the rules that only version 4 has.
func fullEntityWithoutParameters() EntityRecord {
	rec := fullEntityV4()
	rec.Entity.Rules = slices.DeleteFunc(rec.Entity.Rules, func(r broker.Rule) bool {
		return r.Parameters != nil || r.ActionParameters != nil
	})
	return rec
}

// fullEntityWithoutActions is fullEntity as encoders before version 3 wrote
// it: without the rules that only versions 3 and 4 have, and without
// actions.
func fullEntityWithoutActions() EntityRecord {
	rec := fullEntityWithoutParameters()
	rec.Entity.Rules = slices.DeleteFunc(rec.Entity.Rules, func(r broker.Rule) bool { return r.Name == "sql action" })
	for i := range rec.Entity.Rules {
		rec.Entity.Rules[i].Action = ""
	}
	return rec
}

// TestMessageVersion1StillDecodes reads a record that the version 1 encoder
// (before DataSections) wrote, kept in testdata: it is fullMessage.
func TestMessageVersion1StillDecodes(t *testing.T) {
	h, err := os.ReadFile(filepath.Join("testdata", "message-v1-full.hex"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(h)))
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != 1 {
		t.Fatalf("testdata is version %d, want 1", b[0])
	}
	got, err := decodeMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	if want := fullMessage(); !reflect.DeepEqual(got, want) {
		t.Fatalf("version 1 record decoded as\n %#v\nwant %#v", got, want)
	}
	// Written again, it is a version 2 record of the same message.
	again, err := appendMessage(nil, got)
	if err != nil {
		t.Fatal(err)
	}
	if again[0] != messageVersion || !bytes.Equal(again[1:], b[1:]) {
		t.Fatalf("re-encoded as % x, want version %d and the same fields", again, messageVersion)
	}
}

// TestMessageBadDataSections checks that the encoder refuses lengths that
// do not describe the body, and leaves dst alone.
func TestMessageBadDataSections(t *testing.T) {
	for _, m := range []*broker.Message{
		{Body: []byte("abc"), DataSections: []int{1, 1}},
		{Body: []byte("abc"), DataSections: []int{3}},
		{Body: []byte("abc"), DataSections: []int{-1, 4}},
		{Body: []byte("abc"), BodyKind: broker.BodySequence, DataSections: []int{1, 2}},
	} {
		out, err := appendMessage([]byte("prefix"), m)
		if broker.CodeOf(err) != broker.CodeInvalid || string(out) != "prefix" {
			t.Fatalf("sections %v: %q, %v; want prefix and CodeInvalid", m.DataSections, out, err)
		}
	}
}

// TestMessageWithHistoryEvent: a message record with its first history
// event is version 3 and decodes as the same message, the event read apart
// (a long one too, whose length takes more than one byte); a record without
// one stays version 2 and has none.
func TestMessageWithHistoryEvent(t *testing.T) {
	m := fullMessage()
	plain, err := appendMessage(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	if plain[0] != messageVersion {
		t.Fatalf("a message without history is version %d, want %d", plain[0], messageVersion)
	}
	if ev, err := decodeMessageHistory(plain, nil); ev != nil || err != nil {
		t.Fatalf("history of a version 2 record: %+v, %v", ev, err)
	}
	for i, ev := range []HistoryEvent{
		{Kind: broker.EventSent, Time: 5, Actor: "connection 1f link s"},
		{Kind: broker.EventDeadLettered, Sub: broker.SubQueueDeadLetter, DeliveryCount: 3, Time: 6, Until: 7,
			Token: broker.LockToken{9}, Actor: strings.Repeat("a", 200), Reason: "r", Detail: strings.Repeat("d", 20000)},
		{Kind: broker.EventSent, Time: 8, Actor: "short"},
	} {
		var refs *actorRefs
		if i > 0 {
			refs = new(actorRefs) // the actor by reference, as the Pebble store writes it
		}
		b, err := appendMessageRecord([]byte("prefix"), m, &ev, refs)
		if err != nil {
			t.Fatal(err)
		}
		b = b[len("prefix"):]
		if b[0] != messageVersionHistory {
			t.Fatalf("version %d, want %d", b[0], messageVersionHistory)
		}
		got, err := decodeMessage(b)
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Fatalf("decoded %+v, %v; want %+v", got, err, m)
		}
		lookup := func(h uint64) (string, error) {
			if j := slices.Index(refs.hashes, h); j >= 0 {
				return refs.names[j], nil
			}
			return "", corrupt("no actor %x", h)
		}
		first, err := decodeMessageHistory(b, lookup)
		if err != nil || first == nil || *first != ev {
			t.Fatalf("history event %+v, %v; want %+v", first, err, ev)
		}
		byRef := refs != nil && len(ev.Actor) >= minActorRef
		if got := bytes.Contains(b, []byte(ev.Actor)); got == byRef {
			t.Errorf("actor %.20q inline: %v, want %v", ev.Actor, got, !byRef)
		}
		if _, err := decodeMessageHistory(b, nil); byRef && !errors.Is(err, ErrCorrupt) {
			t.Errorf("an actor by reference without its keeper: %v, want ErrCorrupt", err)
		}
	}
}
