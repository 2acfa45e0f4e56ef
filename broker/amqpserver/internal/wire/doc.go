// Package wire is the AMQP 1.0 codec of the peeklock listener: the type
// system (OASIS AMQP 1.0 part 1, §1.6), frames and protocol headers (§2.3),
// the performatives (§2.7) with their composite types, the SASL frames
// (§5.3), and the message format (§3.2) mapped to and from broker.Message
// with the Service Bus annotations (named in package broker/sbamqp).
//
// # Value model
//
// Decoding a value of unknown type (Decoder.ReadAny, DecodeValue) yields:
//
//	null                    nil
//	boolean                 bool
//	ubyte ushort uint ulong uint8 uint16 uint32 uint64
//	byte short int long     int8 int16 int32 int64
//	float double            float32 float64
//	decimal32/64/128        Decimal32 Decimal64 Decimal128 (opaque bytes)
//	char                    Char
//	timestamp               time.Time (UTC, millisecond precision)
//	uuid                    UUID
//	binary                  []byte
//	string                  string
//	symbol                  Symbol
//	list                    []any
//	map                     Map (ordered key/value pairs)
//	array                   a typed slice ([]Symbol, []string, []UUID, []int64,
//	                        []int32, []int16, []int8, []uint64, []uint32,
//	                        []uint16, []bool, []float32, []float64,
//	                        []time.Time, [][]byte, []Map) or, for other
//	                        element types and described elements, Array
//	described type          Described
//
// Encoding (AppendValue) accepts all of these and a few conveniences:
// int and uint, uuid.UUID, broker.LockToken, map[string]any and
// map[Symbol]any (written in sorted key order), time.Duration (as the
// described type com.microsoft:timespan, like the .NET SDK), the delivery
// states and *Error.
//
// Integers are written in their smallest encoding (uint0, smalluint,
// smalllong ...); array elements use the full-width constructor. Lists,
// maps and arrays use the 8-bit size form when they fit.
//
// # Frames
//
// A FrameReader reads protocol headers and frames from a connection and
// refuses frames above the negotiated maximum size; AppendFrame and
// AppendTransferFrames (which splits a delivery to fit the peer's maximum)
// write them. Performatives are structs; optional fields whose absence
// matters are Opt values, and trailing absent fields are left out of the
// encoding as the specification allows. Decoding accepts short lists,
// symbolic descriptors and extended frame headers.
//
// # Messages
//
// DecodeMessage and EncodeMessage map the message format to broker.Message
// with the Service Bus annotations. What Service Bus keeps as sent travels
// too: a body of several data sections keeps its sections
// (broker.Message.DataSections), and the header's durable and priority, the
// sender's own annotations and the footer are passed through
// (broker.Passthrough, kept encoded and merged after the broker's own
// annotations). An active message is sent without x-opt-message-state, as
// Service Bus does. SplitBatch opens a batch delivery;
// DeliveryTag and LockTokenFromDeliveryTag convert lock tokens to and from
// the .NET byte order of delivery tags.
//
// # Errors
//
// Corrupt input never panics: decoding returns a *DecodeError (errors.Is
// ErrDecode) with the byte offset at which it failed. A decoder never
// allocates for more elements than the remaining input could hold.
//
// # Aliasing
//
// Byte slices that the Decoder and FrameReader return (binary values,
// delivery tags, transfer payloads) alias the input buffer; copy what you
// keep beyond the buffer's lifetime. DecodeMessage copies: the
// broker.Message it returns shares nothing with its input.
package wire
