package pserver

import (
	"math/rand/v2"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/wire"
	"github.com/gtrain/gtrain/pserver/wire/wiretest"
	"google.golang.org/protobuf/proto"
)

func TestPushSinkMatchesProtoDecoding(t *testing.T) {
	s := testShard(t, jobspec.ModeSync, 2, "sgd")
	sink := &pushSink{shard: s}
	for _, b := range s.Blocks() {
		vals := make([]float32, b.Len)
		for i := range vals {
			vals[i] = float32(b.ID*100 + i)
		}
		msg, err := proto.Marshal(&api.PushChunk{TrainerId: 1, Step: 0, Records: 3, Block: int32(b.ID), Data: model.Float32Bytes(vals), Checkpoint: b.ID == 0, Epoch: 4})
		if err != nil {
			t.Fatal(err)
		}
		if err := (wire.Codec{}).Unmarshal(wiretest.Split(msg, 5, 7), sink); err != nil {
			t.Fatal(err)
		}
	}
	g := sink.g
	if g.MicroBatch != 1 || g.Records != 3 || !g.Checkpoint || g.RollbackEpoch != 4 {
		t.Fatalf("header: trainer %d records %d checkpoint %v rollback epoch %d", g.MicroBatch, g.Records, g.Checkpoint, g.RollbackEpoch)
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

func TestPushSinkRejectsGarbageWithoutPanic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	s := testShard(t, jobspec.ModeSync, 1, "sgd")
	for i := 0; i < 2000; i++ {
		b := wiretest.Garbage(r)
		_ = (wire.Codec{}).Unmarshal(wiretest.Split(b, r.IntN(8)), &pushSink{shard: s})
	}
}
