package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/gtrain/gtrain/model"
	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/proto" // registers the "proto" codec delegated to
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Codec is gRPC's proto codec, except that a message decoded into a Sink (the
// two bulk messages: a pull reply into the trainer's parameters, a push into
// the pserver's gradient buffer) lands straight where its floats belong. That
// saves protobuf's allocation and one copy of every tensor byte. The wire
// format is plain protobuf, so any gRPC peer still talks to a pserver.
type Codec struct{}

var protoCodec = encoding.GetCodecV2("proto")

// littleEndian: the sinks write wire bytes straight into float32 memory,
// which is only right on a little-endian host; elsewhere plain decoding runs.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// DecodesInPlace reports whether this host may decode bulk messages into
// float32 memory (a Sink); if not, callers use plain protobuf decoding.
func DecodesInPlace() bool { return littleEndian }

// Name implements encoding.CodecV2.
func (Codec) Name() string { return "proto" }

// Marshal implements encoding.CodecV2.
//
// A bulk message (a chunk of a push or a pull) is encoded into a buffer of
// the pserver connections' pool (pool.go) instead of gRPC's default one,
// which the pservers' frequent collections empty: it is a 1 MiB
// allocation per chunk otherwise. A lent message (Loans.Lend) is not
// copied at all.
func (Codec) Marshal(v any) (mem.BufferSlice, error) {
	if ln, ok := v.(*loan); ok {
		return ln.marshal()
	}
	m, ok := v.(proto.Message)
	if !ok {
		return protoCodec.Marshal(v)
	}
	size := proto.Size(m)
	if size < pooledMin {
		return protoCodec.Marshal(v)
	}
	buf := sharedPool.Get(size)
	// UseCachedSize reuses the Size just computed (the message is not
	// changed meanwhile), as gRPC's own codec does.
	out, err := proto.MarshalOptions{UseCachedSize: true}.MarshalAppend((*buf)[:0], m)
	if err != nil {
		sharedPool.Put(buf)
		return nil, err
	}
	*buf = out
	return mem.BufferSlice{mem.NewBuffer(buf, sharedPool)}, nil
}

// Unmarshal implements encoding.CodecV2.
func (Codec) Unmarshal(data mem.BufferSlice, v any) error {
	if s, ok := v.(Sink); ok {
		return decode(data, s)
	}
	if err := checkTables(data, v); err != nil {
		return err
	}
	return protoCodec.Unmarshal(data, v)
}

// Sink receives one protobuf message field by field; the bulk field is read
// into the slice DataDst returns.
type Sink interface {
	// Reset gives the per-message fields their proto3 defaults (zero values
	// are not on the wire).
	Reset()
	Varint(num protowire.Number, v uint64)
	DataField() protowire.Number
	DataDst(n int) ([]byte, error)
	Done() error
}

// A FieldSink is a Sink that also takes length-delimited fields other than
// its data field (a push's rows, PushChunk.rows): Wants says which, and
// Field receives each one's bytes, copied out of gRPC's buffers. Any
// other is skipped.
type FieldSink interface {
	Sink
	Wants(num protowire.Number) bool
	Field(num protowire.Number, b []byte)
}

// ErrMalformed is returned for a bulk message that does not decode.
var ErrMalformed = errors.New("malformed tensor message")

// decode walks a protobuf message in data (spread over gRPC's buffers).
func decode(data mem.BufferSlice, s Sink) error {
	r := data.Reader()
	defer r.Close()
	s.Reset()
	for r.Remaining() > 0 {
		tag, err := binary.ReadUvarint(r)
		if err != nil {
			return fmt.Errorf("%w: tag: %v", ErrMalformed, err)
		}
		if err := decodeField(r, s, protowire.Number(tag>>3), protowire.Type(tag&7)); err != nil {
			return err
		}
	}
	return s.Done()
}

// decodeField reads the value of one field whose tag was just read.
func decodeField(r *mem.Reader, s Sink, num protowire.Number, typ protowire.Type) error {
	switch typ {
	case protowire.VarintType:
		v, err := binary.ReadUvarint(r)
		if err != nil {
			return fmt.Errorf("%w: field %d: %v", ErrMalformed, num, err)
		}
		s.Varint(num, v)
		return nil
	case protowire.BytesType:
		return decodeBytes(r, s, num)
	case protowire.Fixed32Type:
		return skip(r, num, 4)
	case protowire.Fixed64Type:
		return skip(r, num, 8)
	}
	return fmt.Errorf("%w: field %d has wire type %d", ErrMalformed, num, typ)
}

// decodeBytes reads a length-delimited field: the sink's data field into its
// destination, any other skipped.
func decodeBytes(r *mem.Reader, s Sink, num protowire.Number) error {
	n, err := binary.ReadUvarint(r)
	if err != nil || n > uint64(r.Remaining()) {
		return fmt.Errorf("%w: field %d: length %d of %d left", ErrMalformed, num, n, r.Remaining())
	}
	if fs, ok := s.(FieldSink); ok && num != s.DataField() && fs.Wants(num) {
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return fmt.Errorf("%w: field %d: %v", ErrMalformed, num, err)
		}
		fs.Field(num, b)
		return nil
	}
	if num != s.DataField() {
		return skip(r, num, int(n))
	}
	dst, err := s.DataDst(int(n))
	if err != nil {
		return err
	}
	if _, err := io.ReadFull(r, dst); err != nil {
		return fmt.Errorf("%w: data: %v", ErrMalformed, err)
	}
	return nil
}

func skip(r *mem.Reader, num protowire.Number, n int) error {
	if _, err := r.Discard(n); err != nil {
		return fmt.Errorf("%w: field %d: %v", ErrMalformed, num, err)
	}
	return nil
}

// FloatBytes checks that n bytes are whole floats fitting in dst[offset:] and
// returns that memory as bytes to decode into; what names dst in the error.
func FloatBytes(dst []float32, offset int64, n int, what string) ([]byte, error) {
	// offset comes off the wire: compared without adding, which could overflow.
	if n < 0 || n%4 != 0 || offset < 0 || offset > int64(len(dst)) || int64(n/4) > int64(len(dst))-offset {
		return nil, fmt.Errorf("%w: %s: %d bytes at float offset %d of %d", ErrMalformed, what, n, offset, len(dst))
	}
	return model.Float32Bytes(dst[offset : offset+int64(n/4)]), nil
}
