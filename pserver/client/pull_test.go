package client

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/wire"
	"github.com/gtrain/gtrain/pserver/wire/wiretest"
	"google.golang.org/protobuf/proto"
)

// twoServerClient is a client (never dialled) of the partition of two
// parameters, 10 and 6 floats, over two pservers in blocks of 4, and a block
// of server 1 that starts inside its parameter.
func twoServerClient(t *testing.T) (*Client, Block) {
	t.Helper()
	blocks, err := Partition([]int{10, 6}, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{blocks: blocks, byID: map[int]Block{}}
	var mine Block
	for _, b := range blocks {
		c.byID[b.ID] = b
		if b.Server == 1 && b.Len >= 3 {
			mine = b
		}
	}
	return c, mine
}

func TestParamSinkDecodesAcrossBuffers(t *testing.T) {
	c, mine := twoServerClient(t)
	vals := []float32{1.5, -2.25}
	b, err := proto.Marshal(&api.ParamChunk{Step: 7, Block: int32(mine.ID), Offset: 1, Data: model.Float32Bytes(vals)})
	if err != nil {
		t.Fatal(err)
	}
	for cut := 1; cut < len(b); cut++ {
		params := [][]float32{make([]float32, 10), make([]float32, 6)}
		sink := &paramSink{c: c, server: 1, arrays: [][][]float32{params}}
		if err := (wire.Codec{}).Unmarshal(wiretest.Split(b, cut, 3), sink); err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		got := params[mine.Param][mine.Offset+1 : mine.Offset+3]
		if sink.step != 7 || got[0] != 1.5 || got[1] != -2.25 {
			t.Fatalf("cut at %d: step %d values %v", cut, sink.step, got)
		}
	}
}

func TestParamSinkRefusesForeignBlocks(t *testing.T) {
	c, mine := twoServerClient(t)
	vals := []float32{1.5, -2.25}
	if c.byID[0].Server == 1 {
		t.Fatal("fixture: block 0 should be server 0's")
	}
	wrong, _ := proto.Marshal(&api.ParamChunk{Block: 0, Data: model.Float32Bytes(vals)}) // block 0: zero, not on the wire
	past, _ := proto.Marshal(&api.ParamChunk{Block: int32(mine.ID), Offset: int64(mine.Len), Data: model.Float32Bytes(vals)})
	for what, b := range map[string][]byte{"block of another server": wrong, "data past the block": past} {
		sink := &paramSink{c: c, server: 1, arrays: [][][]float32{[][]float32{make([]float32, 10), make([]float32, 6)}}}
		if err := (wire.Codec{}).Unmarshal(wiretest.Split(b), sink); !errors.Is(err, wire.ErrMalformed) {
			t.Fatalf("%s: err = %v, want ErrMalformed", what, err)
		}
	}
}

func TestParamSinkRejectsGarbageWithoutPanic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		b := wiretest.Garbage(r)
		_ = (wire.Codec{}).Unmarshal(wiretest.Split(b, r.IntN(8)), &paramSink{c: &Client{byID: map[int]Block{}}, arrays: [][][]float32{[][]float32{make([]float32, 4)}}})
	}
}
