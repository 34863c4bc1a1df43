package pserver

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/model"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// split cuts wire bytes into gRPC buffers at the given sizes (then the rest),
// as frames arrive.
func split(b []byte, sizes ...int) mem.BufferSlice {
	var out mem.BufferSlice
	for _, n := range sizes {
		n = min(n, len(b))
		out = append(out, mem.SliceBuffer(append([]byte(nil), b[:n]...)))
		b = b[n:]
	}
	return append(out, mem.SliceBuffer(append([]byte(nil), b...)))
}

func TestParamSinkDecodesAcrossBuffers(t *testing.T) {
	blocks, err := Partition([]int{10, 6}, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{blocks: blocks, byID: map[int]Block{}}
	for _, b := range blocks {
		c.byID[b.ID] = b
	}
	var mine Block // a block of server 1 that has an offset
	for _, b := range blocks {
		if b.Server == 1 && b.Len >= 3 {
			mine = b
		}
	}
	vals := []float32{1.5, -2.25}
	wire, err := proto.Marshal(&api.ParamChunk{Step: 7, Block: int32(mine.ID), Offset: 1, Data: model.Float32Bytes(vals)})
	if err != nil {
		t.Fatal(err)
	}
	for cut := 1; cut < len(wire); cut++ {
		params := [][]float32{make([]float32, 10), make([]float32, 6)}
		sink := &paramSink{c: c, server: 1, params: params}
		if err := (tensorCodec{}).Unmarshal(split(wire, cut, 3), sink); err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		got := params[mine.Param][mine.Offset+1 : mine.Offset+3]
		if sink.step != 7 || got[0] != 1.5 || got[1] != -2.25 {
			t.Fatalf("cut at %d: step %d values %v", cut, sink.step, got)
		}
	}
	// A block of the other server, or data past the block, is refused.
	wrong, _ := proto.Marshal(&api.ParamChunk{Block: 0, Data: model.Float32Bytes(vals)}) // block 0: zero, not on the wire
	if c.byID[0].Server == 1 {
		t.Fatal("fixture: block 0 should be server 0's")
	}
	if err := (tensorCodec{}).Unmarshal(split(wrong), &paramSink{c: c, server: 1, params: [][]float32{make([]float32, 10), make([]float32, 6)}}); !errors.Is(err, errWire) {
		t.Fatalf("block of another server: %v", err)
	}
	past, _ := proto.Marshal(&api.ParamChunk{Block: int32(mine.ID), Offset: int64(mine.Len), Data: model.Float32Bytes(vals)})
	if err := (tensorCodec{}).Unmarshal(split(past), &paramSink{c: c, server: 1, params: [][]float32{make([]float32, 10), make([]float32, 6)}}); !errors.Is(err, errWire) {
		t.Fatalf("data past the block: %v", err)
	}
}

func TestPushSinkMatchesProtoDecoding(t *testing.T) {
	s := testShard(t, Sync, 2, "sgd")
	sink := &pushSink{shard: s}
	for _, b := range s.Blocks() {
		vals := make([]float32, b.Len)
		for i := range vals {
			vals[i] = float32(b.ID*100 + i)
		}
		wire, err := proto.Marshal(&api.PushChunk{TrainerId: 1, Step: 0, Records: 3, Block: int32(b.ID), Data: model.Float32Bytes(vals), Checkpoint: b.ID == 0, Epoch: 0})
		if err != nil {
			t.Fatal(err)
		}
		if err := (tensorCodec{}).Unmarshal(split(wire, 5, 7), sink); err != nil {
			t.Fatal(err)
		}
	}
	g := sink.g
	if g.Trainer != 1 || g.Records != 3 || !g.Checkpoint {
		t.Fatalf("header: trainer %d records %d checkpoint %v", g.Trainer, g.Records, g.Checkpoint)
	}
	if err := g.complete(); err != nil {
		t.Fatal(err)
	}
	for _, b := range s.Blocks() {
		for i, v := range g.data[b.ID] {
			if v != float32(b.ID*100+i) {
				t.Fatalf("block %d element %d = %v", b.ID, i, v)
			}
		}
	}
}

func TestTensorCodecRejectsGarbageWithoutPanic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	s := testShard(t, Sync, 1, "sgd")
	for i := 0; i < 2000; i++ {
		b := make([]byte, r.IntN(64))
		for j := range b {
			b[j] = byte(r.IntN(256))
		}
		_ = (tensorCodec{}).Unmarshal(split(b, r.IntN(8)), &pushSink{shard: s})
		_ = (tensorCodec{}).Unmarshal(split(b), &paramSink{c: &Client{byID: map[int]Block{}}, params: [][]float32{make([]float32, 4)}})
	}
}
