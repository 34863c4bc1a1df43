package wire

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"google.golang.org/protobuf/proto"
)

// TestLentChunkIsPlainProtobufSentInPlace: a lent push chunk encodes to a
// message plain protobuf decodes to the same fields (data before fields of
// higher numbers is no matter), its data is sent from the caller's memory
// (not a copy), and Wait holds until gRPC frees that buffer.
func TestLentChunkIsPlainProtobufSentInPlace(t *testing.T) {
	data := make([]byte, 64<<10)
	for i := range data {
		data[i] = byte(i * 7)
	}
	msg := &api.PushChunk{TrainerId: 2, Step: 9, Records: 256, Block: 3, Offset: 1 << 18, Data: data, Checkpoint: true, Epoch: 4}
	var loans Loans
	bs, err := Codec{}.Marshal(loans.Lend(msg))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(msg.Data, data) || &msg.Data[0] != &data[0] {
		t.Fatal("lending changed the message's data")
	}
	var got api.PushChunk
	if err := proto.Unmarshal(bs.Materialize(), &got); err != nil {
		t.Fatalf("the lent chunk does not decode: %v", err)
	}
	if !proto.Equal(&got, msg) {
		t.Fatalf("decoded %v; want %v", &got, msg)
	}
	last := bs[len(bs)-1].ReadOnlyData()
	if len(last) != len(data) || &last[0] != &data[0] {
		t.Fatal("the data was copied, not lent")
	}
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := loans.Wait(short); err == nil {
		t.Fatal("Wait returned while gRPC still held the data")
	}
	bs.Free()
	if err := loans.Wait(context.Background()); err != nil {
		t.Fatalf("Wait after the buffers were freed: %v", err)
	}
}

// TestLentSmallChunkIsCopied: data under the pooling size is encoded as
// usual and given back at once (gRPC would never free it).
func TestLentSmallChunkIsCopied(t *testing.T) {
	msg := &api.ParamChunk{Step: 1, Block: 5, Data: make([]byte, 40)}
	var loans Loans
	bs, err := Codec{}.Marshal(loans.Lend(msg))
	if err != nil {
		t.Fatal(err)
	}
	var got api.ParamChunk
	if err := proto.Unmarshal(bs.Materialize(), &got); err != nil || !proto.Equal(&got, msg) {
		t.Fatalf("decoded %v (%v); want %v", &got, err, msg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := loans.Wait(ctx); err != nil {
		t.Fatalf("a small chunk was not given back: %v", err)
	}
}
