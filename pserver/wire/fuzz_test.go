package wire

import (
	"errors"
	"slices"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/model"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// FuzzCodecDecode feeds arbitrary bytes, cut into two gRPC buffers at any
// point, to the in-place tensor decoder: no panic, nothing written outside
// the destination, no allocation sized by a length field (the decoder only
// fills memory the sink already has), and every error is ErrMalformed.
func FuzzCodecDecode(f *testing.F) {
	for _, m := range []*api.ParamChunk{
		{Step: 7, Block: 2, Offset: 1, Data: model.Float32Bytes([]float32{1.5, -2.25, 3})},
		{Offset: 15, Data: model.Float32Bytes([]float32{9})},
		{},
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint(len(b)/2))
	}
	f.Add([]byte{0x18, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x22, 0x08, 1, 2, 3, 4, 5, 6, 7, 8}, uint(3))
	f.Fuzz(func(t *testing.T, data []byte, cut uint) {
		cut = min(cut, uint(len(data)))
		bufs := mem.BufferSlice{mem.SliceBuffer(data[:cut]), mem.SliceBuffer(data[cut:])}
		const guard = 4
		backing := make([]float32, 16+guard)
		s := &recordingSink{data: backing[:16:16]}
		err := Codec{}.Unmarshal(bufs, s)
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("error is not ErrMalformed: %v", err)
		}
		for i, v := range backing[16:] {
			if v != 0 {
				t.Fatalf("float %d past the destination was written: %v", 16+i, v)
			}
		}
	})
}

// FuzzCodecTables: any bytes as a call of several tables' rows decode or
// fail without a panic, and what decodes holds at most MaxTablesPerCall
// tables.
func FuzzCodecTables(f *testing.F) {
	for _, m := range []*api.TablesRowsPush{
		{Tables: []*api.RowsPush{{Table: "movie", Ids: []uint64{7, 1 << 40}, Data: model.Float32Bytes([]float32{1, 2, 3, 4, 5, 6})}, {Table: "user"}}},
		{},
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint(len(b)/2))
	}
	f.Add(slices.Repeat([]byte{0x0a, 0x00}, MaxTablesPerCall+1), uint(7))
	f.Fuzz(func(t *testing.T, data []byte, cut uint) {
		cut = min(cut, uint(len(data)))
		bufs := mem.BufferSlice{mem.SliceBuffer(data[:cut]), mem.SliceBuffer(data[cut:])}
		var push api.TablesRowsPush
		if err := (Codec{}).Unmarshal(bufs, &push); err == nil && len(push.Tables) > MaxTablesPerCall {
			t.Fatalf("a push of %d tables decoded, at most %d", len(push.Tables), MaxTablesPerCall)
		}
		var pull api.TablesRowsRequest
		if err := (Codec{}).Unmarshal(bufs, &pull); err == nil && len(pull.Tables) > MaxTablesPerCall {
			t.Fatalf("a pull of %d tables decoded, at most %d", len(pull.Tables), MaxTablesPerCall)
		}
	})
}
