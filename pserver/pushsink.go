package pserver

import (
	"errors"
	"fmt"

	"github.com/gtrain/gtrain/pserver/region"
	"github.com/gtrain/gtrain/pserver/wire"
	"google.golang.org/protobuf/encoding/protowire"
)

// pushSink decodes api.PushChunk (trainer 1, step 2, records 3, block 4,
// offset 5, data 6, checkpoint 7, rollback epoch 8, region 9, region
// floats 10) into the shard's gradient buffer, and keeps the raw bytes of
// its rows (11) for the handler (Server.takeRows).
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
	// A chunk in a region (region_floats, from the region regions holds
	// as region): use is the region, held until the stream ends; regionErr
	// why it could not be read (the trainer pushes again without it).
	regions      *shardRegions
	region       uint64
	regionFloats int64
	use          *regionUse
	regionErr    error
	rows         []byte // this message's rows, nil when none
}

// regionUse is a region a stream holds, locked: its blocks' places, and
// what gives it back.
type regionUse struct {
	e       *region.Entry
	offsets map[int]int
	release func()
}

// done unlocks and gives back the region (nothing when u is nil).
func (u *regionUse) done() {
	if u != nil {
		u.e.Unlock()
		u.release()
	}
}

// Reset gives the per-message fields their proto3 defaults (zero values are
// not on the wire); trainer, step and records are those of the stream.
func (p *pushSink) Reset() {
	p.block, p.offset, p.checkpoint, p.rollbackEpoch = 0, 0, false, 0
	p.region, p.regionFloats = 0, 0
	p.rows = nil
}
func (p *pushSink) DataField() protowire.Number { return 6 }

// Wants and Field take the rows (wire.FieldSink). A field given twice is
// one message merged, as protobuf reads it: the bytes appended.
func (p *pushSink) Wants(num protowire.Number) bool { return num == 11 }
func (p *pushSink) Field(num protowire.Number, b []byte) {
	p.rows = append(p.rows, b...)
}

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
	case 9:
		p.region = v
	case 10:
		p.regionFloats = int64(v)
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
	if p.regionFloats != 0 && p.regionErr == nil {
		p.regionErr = p.fromRegion()
	}
	g := p.gradient()
	g.Checkpoint = g.Checkpoint || p.checkpoint
	g.RollbackEpoch = p.rollbackEpoch
	return nil
}

// fromRegion copies the chunk's floats out of its region into the
// gradient; a chunk out of its block's bounds is refused as one in data.
func (p *pushSink) fromRegion() error {
	if p.use == nil {
		if p.regions == nil {
			return errors.New("this pserver takes no regions")
		}
		e, release, err := p.regions.registry.Use(p.region)
		if err != nil {
			return err
		}
		// The trainer's previous stream may still hold it, ending: given up
		// on after its acknowledgement, its handler may be writing
		// parameters (client.regionSlot.finish).
		e.Lock()
		p.use = &regionUse{e: e, offsets: p.regions.offsets, release: release}
	} else if p.use.e.ID != p.region {
		return fmt.Errorf("a push through regions %x and %x", p.use.e.ID, p.region)
	}
	g := p.gradient()
	d, ok := g.data[int(p.block)]
	at, inRegion := p.use.offsets[int(p.block)]
	if !ok || !inRegion {
		p.refuse(0, fmt.Errorf("block %d: %w", p.block, ErrBadBlock))
		return nil
	}
	n := p.regionFloats
	if p.offset < 0 || n < 0 || p.offset > int64(len(d)) || n > int64(len(d))-p.offset {
		p.refuse(0, fmt.Errorf("%w: block %d: %d floats at %d of %d", ErrBadGradient, p.block, n, p.offset, len(d)))
		return nil
	}
	src := p.use.e.Grads()[at+int(p.offset):]
	copy(d[p.offset:p.offset+n], src[:n])
	g.got[int(p.block)] += int(n)
	return nil
}
