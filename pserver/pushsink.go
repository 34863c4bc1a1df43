package pserver

import (
	"fmt"

	"github.com/gtrain/gtrain/pserver/wire"
	"google.golang.org/protobuf/encoding/protowire"
)

// pushSink decodes api.PushChunk (trainer 1, step 2, records 3, block 4,
// offset 5, data 6, checkpoint 7, rollback epoch 8) into the shard's
// gradient buffer.
type pushSink struct {
	shard         *Shard
	g             *Gradient
	trainer       int32
	step          int64
	records       int64
	block         int32
	offset        int64
	checkpoint    bool
	rollbackEpoch int64
	// refused is DataDst's refusal of the push (a block this shard does
	// not hold, data out of a block's bounds). DataDst does not fail the
	// decode with it: gRPC would answer a decode error itself, as Internal,
	// whatever the handler returns. It reads the data into discard instead,
	// and the handler answers InvalidArgument, as the decoded path does.
	refused error
	discard []byte
}

// Reset gives the per-message fields their proto3 defaults (zero values are
// not on the wire); trainer, step and records are those of the stream.
func (p *pushSink) Reset() {
	p.block, p.offset, p.checkpoint, p.rollbackEpoch = 0, 0, false, 0
}
func (p *pushSink) DataField() protowire.Number { return 6 }

func (p *pushSink) Varint(num protowire.Number, v uint64) {
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
		p.rollbackEpoch = int64(v)
	}
}

func (p *pushSink) gradient() *Gradient {
	if p.g == nil {
		p.g = p.shard.NewGradient(int(p.trainer), p.step, p.records)
	}
	return p.g
}

func (p *pushSink) DataDst(n int) ([]byte, error) {
	g := p.gradient()
	d, ok := g.data[int(p.block)]
	if !ok {
		return p.refuse(n, fmt.Errorf("block %d: %w", p.block, ErrBadBlock))
	}
	dst, err := wire.FloatBytes(d, p.offset, n, fmt.Sprintf("block %d", p.block))
	if err != nil {
		return p.refuse(n, fmt.Errorf("%w (%v)", ErrBadGradient, err))
	}
	g.got[int(p.block)] += n / 4
	return dst, nil
}

// refuse records the push's first refusal and takes the n bytes of data
// the message carries nowhere.
func (p *pushSink) refuse(n int, err error) ([]byte, error) {
	if p.refused == nil {
		p.refused = err
	}
	if cap(p.discard) < n {
		p.discard = make([]byte, n)
	}
	return p.discard[:n], nil
}

func (p *pushSink) Done() error {
	g := p.gradient()
	g.Checkpoint = g.Checkpoint || p.checkpoint
	g.RollbackEpoch = p.rollbackEpoch
	return nil
}
