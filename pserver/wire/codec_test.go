package wire

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/wire/wiretest"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// recordingSink keeps every varint and decodes field 4 into a fixed buffer,
// as api.ParamChunk's data.
type recordingSink struct {
	varints map[protowire.Number]uint64
	data    []float32
	done    int
}

func (s *recordingSink) Reset()                      { s.varints = map[protowire.Number]uint64{} }
func (s *recordingSink) DataField() protowire.Number { return 4 }
func (s *recordingSink) Done() error                 { s.done++; return nil }
func (s *recordingSink) Varint(num protowire.Number, v uint64) {
	s.varints[num] = v
}
func (s *recordingSink) DataDst(n int) ([]byte, error) {
	return FloatBytes(s.data, int64(s.varints[3]), n, "test data")
}

func TestCodecDecodesIntoSinkAcrossBuffers(t *testing.T) {
	vals := []float32{1.5, -2.25, 3}
	b, err := proto.Marshal(&api.ParamChunk{Step: 7, Block: 2, Offset: 1, Data: model.Float32Bytes(vals)})
	if err != nil {
		t.Fatal(err)
	}
	for cut := 1; cut < len(b); cut++ {
		s := &recordingSink{data: make([]float32, 5)}
		if err := (Codec{}).Unmarshal(wiretest.Split(b, cut, 3), s); err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if s.varints[1] != 7 || s.varints[2] != 2 || s.done != 1 || !slices.Equal(s.data, []float32{0, 1.5, -2.25, 3, 0}) {
			t.Fatalf("cut at %d: varints %v data %v done %d", cut, s.varints, s.data, s.done)
		}
	}
}

func TestCodecPassesOtherMessagesToProto(t *testing.T) {
	b, err := proto.Marshal(&api.PullRequest{MinStep: 9, Epoch: 2})
	if err != nil {
		t.Fatal(err)
	}
	var got api.PullRequest
	if err := (Codec{}).Unmarshal(wiretest.Split(b), &got); err != nil || got.MinStep != 9 || got.Epoch != 2 {
		t.Fatalf("Unmarshal = %v, %+v", err, &got)
	}
}

func TestFloatBytesBounds(t *testing.T) {
	dst := make([]float32, 4)
	for _, tc := range []struct {
		offset int64
		n      int
		ok     bool
	}{
		{0, 16, true},
		{3, 4, true},
		{4, 0, true},
		{3, 8, false},  // past the end
		{0, 6, false},  // not whole floats
		{-1, 4, false}, // before the start
	} {
		b, err := FloatBytes(dst, tc.offset, tc.n, "dst")
		if tc.ok && (err != nil || len(b) != tc.n) {
			t.Errorf("FloatBytes(offset %d, %d bytes) = %d bytes, %v", tc.offset, tc.n, len(b), err)
		}
		if !tc.ok && !errors.Is(err, ErrMalformed) {
			t.Errorf("FloatBytes(offset %d, %d bytes): err = %v, want ErrMalformed", tc.offset, tc.n, err)
		}
	}
}

func TestCodecRejectsGarbageWithoutPanic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		b := wiretest.Garbage(r)
		_ = (Codec{}).Unmarshal(wiretest.Split(b, r.IntN(8)), &recordingSink{data: make([]float32, 4)})
	}
}

// TestCodecCountsTablesFirst: a call of several tables' rows decodes up to
// MaxTablesPerCall tables, across buffers, and is refused past them before
// protobuf decodes it (each table costs ~50x its wire bytes decoded).
func TestCodecCountsTablesFirst(t *testing.T) {
	for _, n := range []int{MaxTablesPerCall, MaxTablesPerCall + 1} {
		req := &api.TablesRowsRequest{Tables: make([]*api.RowsRequest, n)}
		push := &api.TablesRowsPush{Tables: make([]*api.RowsPush, n)}
		for i := range n {
			req.Tables[i], push.Tables[i] = &api.RowsRequest{}, &api.RowsPush{}
		}
		req.Tables[n-1].Table, push.Tables[n-1].Ids = "last", []uint64{5}
		for _, m := range []proto.Message{req, push} {
			b, err := proto.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			got := m.ProtoReflect().New().Interface()
			err = (Codec{}).Unmarshal(wiretest.Split(b, len(b)/3), got)
			if n > MaxTablesPerCall {
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("%T of %d tables: err %v, want refused", m, n, err)
				}
				continue
			}
			if err != nil || !proto.Equal(got, m) {
				t.Fatalf("%T of %d tables: err %v, or not the message sent", m, n, err)
			}
		}
	}
}
