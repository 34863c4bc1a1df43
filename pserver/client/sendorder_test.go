package client

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/pserver/wire"
	"google.golang.org/protobuf/proto"
)

// TestPushSendsFirstParametersFirstInPieces: a push overlapped with the
// backward pass prefers a pserver's first parameters (the built-in models
// compute their gradients first), a large parameter piece by piece as its
// first floats become final, and waits for each piece's end before
// sending it.
func TestPushSendsFirstParametersFirstInPieces(t *testing.T) {
	big := 2*wire.ChunkFloats + 3
	blocks, err := Partition([]int{big, 7, 5, 4}, 2, MaxBlockFloats)
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{blocks: blocks}
	grads := [][]float32{make([]float32, big), make([]float32, 7), make([]float32, 5), make([]float32, 4)}
	var waited, sent []string
	wait := func(_ context.Context, pieces []GradientPiece) (int, error) {
		waited = append(waited, fmt.Sprintf("%d:%d", pieces[0].Param, pieces[0].End))
		return 0, nil // all final: the push's own order
	}
	send := func(m any) error {
		ch, err := sentChunk(m)
		if err != nil {
			return err
		}
		b := c.blocks[ch.Block]
		sent = append(sent, fmt.Sprintf("%d:%d+%d", b.Param, b.Offset+int(ch.Offset), len(ch.Data)/4))
		return nil
	}
	var h pushHeader
	if err := c.apply(&h, []PushOption{WaitForGradient(wait)}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		waited, sent = nil, nil
		if _, err := c.sendBlocks(context.Background(), i, send, h, grads, nil); err != nil {
			t.Fatal(err)
		}
		var wantWaits, wantSent []string
		for _, p := range c.heldBy(i) {
			for _, b := range blocks {
				if b.Param != p || b.Server != i {
					continue
				}
				for off := 0; off < b.Len; off += wire.ChunkFloats {
					end := min(off+wire.ChunkFloats, b.Len)
					wantWaits = append(wantWaits, fmt.Sprintf("%d:%d", p, b.Offset+end))
					wantSent = append(wantSent, fmt.Sprintf("%d:%d+%d", p, b.Offset+off, end-off))
				}
			}
		}
		if !slices.Equal(waited, wantWaits) || !slices.Equal(sent, wantSent) {
			t.Fatalf("pserver %d: waited %v, sent %v; want waits %v, sends %v", i, waited, sent, wantWaits, wantSent)
		}
	}
	// Pserver 0 holds the big parameter in 3 pieces: the test covers pieces.
	if held := c.heldBy(0); !slices.Contains(held, 0) {
		t.Fatalf("pserver 0 holds %v; the test expects the big parameter there", held)
	}
}

// TestPushSendsWhicheverPieceIsFinalFirst: a push sends the piece whose
// gradient is final, not the one it prefers: a pserver holding a layer's
// bias (final early, say) and the next layer's weight (computed in bands)
// sends the bias first, and each band as it ends, not the bands after the
// bias nor the bias after the whole weight.
func TestPushSendsWhicheverPieceIsFinalFirst(t *testing.T) {
	big := 2*wire.ChunkFloats + 3
	blocks, err := Partition([]int{7, big}, 1, MaxBlockFloats)
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{blocks: blocks}
	grads := [][]float32{make([]float32, 7), make([]float32, big)}
	// What the computation makes final, in order: the weight's first band,
	// the bias, then the weight's other two bands.
	steps := []GradientPiece{{1, wire.ChunkFloats}, {0, 7}, {1, 2 * wire.ChunkFloats}, {1, big}}
	final := []int{0, 0}
	computed := 0
	wait := func(_ context.Context, pieces []GradientPiece) (int, error) {
		for {
			if k := slices.IndexFunc(pieces, func(p GradientPiece) bool { return final[p.Param] >= p.End }); k >= 0 {
				return k, nil
			}
			if computed == len(steps) {
				return 0, fmt.Errorf("waiting for %v, computed all", pieces)
			}
			s := steps[computed]
			final[s.Param] = s.End
			computed++
		}
	}
	var sent []string
	send := func(m any) error {
		ch, err := sentChunk(m)
		if err != nil {
			return err
		}
		sent = append(sent, fmt.Sprintf("%d:%d+%d (computed %d)", c.blocks[ch.Block].Param, ch.Offset, len(ch.Data)/4, computed))
		return nil
	}
	var h pushHeader
	if err := c.apply(&h, []PushOption{WaitForGradient(wait)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.sendBlocks(context.Background(), 0, send, h, grads, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{
		fmt.Sprintf("1:0+%d (computed 1)", wire.ChunkFloats),
		"0:0+7 (computed 2)",
		fmt.Sprintf("1:%d+%d (computed 3)", wire.ChunkFloats, wire.ChunkFloats),
		fmt.Sprintf("1:%d+3 (computed 4)", 2*wire.ChunkFloats),
	}
	if !slices.Equal(sent, want) {
		t.Fatalf("sent %v; want each piece as soon as it is final: %v", sent, want)
	}
}

// TestHeldByNamesEachPserversParameters: the parameters a PushPull waits
// to be released before writing a pserver's answer are exactly those it
// holds blocks of.
func TestHeldByNamesEachPserversParameters(t *testing.T) {
	blocks, err := Partition([]int{10, 2, 10, 2}, 2, MaxBlockFloats)
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{blocks: blocks}
	if got := [][]int{c.heldBy(0), c.heldBy(1)}; !slices.Equal(got[0], []int{0, 1}) || !slices.Equal(got[1], []int{2, 3}) {
		t.Fatalf("held %v; want [[0 1] [2 3]] (12 floats each)", got)
	}
}

// sentChunk is what gRPC does with a lent chunk: it marshals it, here
// read back.
func sentChunk(m any) (*api.PushChunk, error) {
	data, err := wire.Codec{}.Marshal(m)
	if err != nil {
		return nil, err
	}
	defer data.Free()
	ch := &api.PushChunk{}
	return ch, proto.Unmarshal(data.Materialize(), ch)
}
