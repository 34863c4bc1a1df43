package pserver

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
)

// tensorCodec is gRPC's proto codec, except that the two bulk messages are
// decoded straight into where their floats belong: a pull reply into the
// trainer's parameters, a push into the pserver's gradient buffer. That saves
// protobuf's allocation and one copy of every tensor byte. The wire format is
// plain protobuf, so any gRPC peer still talks to a pserver.
type tensorCodec struct{}

var protoCodec = encoding.GetCodecV2("proto")

// littleEndian: the sinks write wire bytes straight into float32 memory,
// which is only right on a little-endian host; elsewhere plain decoding runs.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func (tensorCodec) Name() string { return "proto" }

func (tensorCodec) Marshal(v any) (mem.BufferSlice, error) { return protoCodec.Marshal(v) }

func (tensorCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if s, ok := v.(wireSink); ok {
		return decodeInto(data, s)
	}
	return protoCodec.Unmarshal(data, v)
}

// wireSink receives one protobuf message field by field; the bulk field is
// read into the slice dataDst returns.
type wireSink interface {
	reset()
	varint(num protowire.Number, v uint64)
	dataField() protowire.Number
	dataDst(n int) ([]byte, error)
	done() error
}

var errWire = errors.New("malformed tensor message")

// decodeInto walks a protobuf message in data (spread over gRPC's buffers).
func decodeInto(data mem.BufferSlice, s wireSink) error {
	r := data.Reader()
	defer r.Close()
	s.reset()
	for r.Remaining() > 0 {
		tag, err := binary.ReadUvarint(r)
		if err != nil {
			return fmt.Errorf("%w: tag: %v", errWire, err)
		}
		num, typ := protowire.Number(tag>>3), protowire.Type(tag&7)
		switch typ {
		case protowire.VarintType:
			v, err := binary.ReadUvarint(r)
			if err != nil {
				return fmt.Errorf("%w: field %d: %v", errWire, num, err)
			}
			s.varint(num, v)
		case protowire.BytesType:
			n, err := binary.ReadUvarint(r)
			if err != nil || n > uint64(r.Remaining()) {
				return fmt.Errorf("%w: field %d: length %d of %d left", errWire, num, n, r.Remaining())
			}
			if num != s.dataField() {
				if _, err := r.Discard(int(n)); err != nil {
					return fmt.Errorf("%w: field %d: %v", errWire, num, err)
				}
				continue
			}
			dst, err := s.dataDst(int(n))
			if err != nil {
				return err
			}
			if _, err := io.ReadFull(r, dst); err != nil {
				return fmt.Errorf("%w: data: %v", errWire, err)
			}
		case protowire.Fixed32Type:
			if _, err := r.Discard(4); err != nil {
				return fmt.Errorf("%w: field %d: %v", errWire, num, err)
			}
		case protowire.Fixed64Type:
			if _, err := r.Discard(8); err != nil {
				return fmt.Errorf("%w: field %d: %v", errWire, num, err)
			}
		default:
			return fmt.Errorf("%w: field %d has wire type %d", errWire, num, typ)
		}
	}
	return s.done()
}

// floatsOf checks that n bytes are whole floats fitting in dst[offset:].
func floatsOf(dst []float32, offset int64, n int, what string) ([]byte, error) {
	if n%4 != 0 || offset < 0 || offset+int64(n/4) > int64(len(dst)) {
		return nil, fmt.Errorf("%w: %s: %d bytes at float offset %d of %d", errWire, what, n, offset, len(dst))
	}
	return model.Float32Bytes(dst[offset : offset+int64(n/4)]), nil
}

// paramSink decodes api.ParamChunk (step 1, block 2, offset 3, data 4)
// into the trainer's parameters.
type paramSink struct {
	c      *Client
	server int
	params [][]float32
	step   int64
	block  int32
	offset int64
}

// reset gives every field its proto3 default: zero values are not on the wire.
func (p *paramSink) reset()                      { p.step, p.block, p.offset = 0, 0, 0 }
func (p *paramSink) dataField() protowire.Number { return 4 }
func (p *paramSink) done() error                 { return nil }

func (p *paramSink) varint(num protowire.Number, v uint64) {
	switch num {
	case 1:
		p.step = int64(v)
	case 2:
		p.block = int32(int64(v))
	case 3:
		p.offset = int64(v)
	}
}

func (p *paramSink) dataDst(n int) ([]byte, error) {
	b, ok := p.c.byID[int(p.block)]
	if !ok || b.Server != p.server {
		return nil, fmt.Errorf("%w: pserver %d sent block %d", errWire, p.server, p.block)
	}
	return floatsOf(p.params[b.Param][b.Offset:b.Offset+b.Len], p.offset, n, fmt.Sprintf("block %d", b.ID))
}

// pushSink decodes api.PushChunk (trainer 1, step 2, records 3, block 4,
// offset 5, data 6, checkpoint 7, epoch 8) into the shard's gradient buffer.
type pushSink struct {
	shard      *Shard
	g          *Gradient
	trainer    int32
	step       int64
	records    int64
	block      int32
	offset     int64
	checkpoint bool
	epoch      int64
}

// reset gives the per-message fields their proto3 defaults (zero values are
// not on the wire); trainer, step and records are those of the stream.
func (p *pushSink) reset() {
	p.block, p.offset, p.checkpoint, p.epoch = 0, 0, false, 0
}
func (p *pushSink) dataField() protowire.Number { return 6 }

func (p *pushSink) varint(num protowire.Number, v uint64) {
	switch num {
	case 1:
		p.trainer = int32(int64(v))
	case 2:
		p.step = int64(v)
	case 3:
		p.records = int64(v)
	case 4:
		p.block = int32(int64(v))
	case 5:
		p.offset = int64(v)
	case 7:
		p.checkpoint = v != 0
	case 8:
		p.epoch = int64(v)
	}
}

func (p *pushSink) gradient() *Gradient {
	if p.g == nil {
		p.g = p.shard.NewGradient(int(p.trainer), p.step, p.records)
	}
	return p.g
}

func (p *pushSink) dataDst(n int) ([]byte, error) {
	g := p.gradient()
	d, ok := g.data[int(p.block)]
	if !ok {
		return nil, fmt.Errorf("block %d: %w", p.block, ErrBadBlock)
	}
	dst, err := floatsOf(d, p.offset, n, fmt.Sprintf("block %d", p.block))
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrBadGradient, err)
	}
	g.got[int(p.block)] += n / 4
	return dst, nil
}

func (p *pushSink) done() error {
	g := p.gradient()
	g.Checkpoint = g.Checkpoint || p.checkpoint
	g.Epoch = p.epoch
	return nil
}
