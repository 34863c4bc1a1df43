package dataset

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/model"
)

var sparseFields = []IDField{{Name: "user"}, {Name: "genres", Weighted: true}}

func sparseExamples() []Example {
	return []Example{
		{Features: []float32{1.5}, Label: 4, IDs: [][]uint64{{7}, {1, 1 << 63}}, Weights: [][]float32{nil, {0.5, 2}}},
		{Features: []float32{-1}, Label: 2, IDs: [][]uint64{{^uint64(0)}, {}}, Weights: [][]float32{nil, {}}},
	}
}

func TestSparseShardRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s-train-00000-of-00001")
	meta := ShardMeta{Features: 1, Part: PartTrain, IDFields: sparseFields}
	in := sparseExamples()
	if err := WriteShard(path, meta, in, 1); err != nil {
		t.Fatal(err)
	}
	got, _, err := ReadShardMeta(path)
	if err != nil || !reflect.DeepEqual(got.IDFields, sparseFields) {
		t.Fatalf("meta id fields = %+v, %v; want %+v", got.IDFields, err, sparseFields)
	}
	out, err := ReadAll([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Errorf("read back %+v, want %+v", out, in)
	}
	dense := filepath.Join(t.TempDir(), "d-train-00000-of-00001")
	if err := WriteShard(dense, ShardMeta{Features: 1, Part: PartTrain}, []Example{{Features: []float32{1}}}, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAll([]string{path, dense}); !errors.Is(err, ErrMetaMismatch) || !strings.Contains(err.Error(), "user") {
		t.Errorf("ReadAll(sparse, dense) = %v, want ErrMetaMismatch naming the id fields", err)
	}
}

// TestDenseShardUnchanged reads a shard written before id fields existed
// (testdata/dense-before-ids.shard) and writes its records again: the bytes
// are the same, header included.
func TestDenseShardUnchanged(t *testing.T) {
	const golden = "testdata/dense-before-ids.shard"
	old, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	meta, _, err := ReadShardMeta(golden)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := ReadAll([]string{golden})
	if err != nil {
		t.Fatal(err)
	}
	want := []Example{{Features: []float32{1, 2.5}, Label: 3}, {Features: []float32{-1, 0}, Label: 0.5}, {Features: []float32{4, 5}, Label: 6}}
	if !reflect.DeepEqual(ex, want) || meta.IDFields != nil {
		t.Fatalf("old shard reads as %+v (id fields %v), want %+v", ex, meta.IDFields, want)
	}
	path := filepath.Join(t.TempDir(), "again")
	if err := WriteShard(path, ShardMeta{Features: 2, Part: PartTrain}, ex, 2); err != nil {
		t.Fatal(err)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, old) {
		t.Errorf("a dense shard written now differs from one written before id fields:\n% x\n% x", now, old)
	}
}

func TestWriteShardRejectsBadIDs(t *testing.T) {
	meta := ShardMeta{Features: 1, Part: PartTrain, IDFields: sparseFields}
	many := make([]uint64, MaxIDsPerField+1)
	for _, c := range []struct {
		name string
		e    Example
		want string
	}{
		{"no ids", Example{Features: []float32{1}}, "0 id lists"},
		{"too many", Example{Features: []float32{1}, IDs: [][]uint64{many, nil}}, "at most 4096"},
		{"weights missing", Example{Features: []float32{1}, IDs: [][]uint64{{1}, {2}}}, "1 ids and 0 weights"},
		{"unweighted weights", Example{Features: []float32{1}, IDs: [][]uint64{{1}, {}}, Weights: [][]float32{{1}, {}}}, "not weighted"},
	} {
		err := WriteShard(filepath.Join(t.TempDir(), "x"), meta, []Example{c.e}, 1)
		if !errors.Is(err, ErrExampleSize) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: WriteShard = %v, want ErrExampleSize with %q", c.name, err, c.want)
		}
	}
	for _, bad := range []ShardMeta{
		{Features: 0, Part: PartTrain},
		{Features: 0, Part: PartTrain, IDFields: []IDField{{Name: "a"}, {Name: "a"}}},
		{Features: 0, Part: PartTrain, IDFields: []IDField{{Name: "1x"}}},
	} {
		if err := WriteShard(filepath.Join(t.TempDir(), "x"), bad, nil, 1); !errors.Is(err, ErrBadMeta) {
			t.Errorf("WriteShard(meta %+v) = %v, want ErrBadMeta", bad, err)
		}
	}
}

// TestDecodeRecordHostileCounts: a count past the bytes left or past
// MaxIDsPerField is an error, not an allocation.
func TestDecodeRecordHostileCounts(t *testing.T) {
	good := EncodeExample(sparseExamples()[0])
	for _, b := range [][]byte{
		good[:len(good)-1],
		append(append([]byte{}, good...), 0),
		append(EncodeExample(Example{Features: []float32{1}}), 0xff, 0xff, 0xff, 0x7f),
		append(EncodeExample(Example{Features: []float32{1}}), 0x01, 0x10, 0, 0), // 4097
		{1, 2},
	} {
		if _, err := DecodeRecord(b, 1, sparseFields); !errors.Is(err, ErrExampleSize) {
			t.Errorf("DecodeRecord(% x) = %v, want ErrExampleSize", b, err)
		}
	}
}

// ToRecBatch lays a batch out per id field as the recommender takes it:
// the distinct ids in first-appearance order, each record's entries and
// their weights (1 for an unweighted record).
func TestToRecBatch(t *testing.T) {
	var b model.RecBatch
	ToRecBatch(&b, sparseExamples(), len(sparseFields))
	if b.N != 2 || !reflect.DeepEqual(b.Dense, []float32{1.5, -1}) || !reflect.DeepEqual(b.Y, []float32{4, 2}) {
		t.Errorf("N %d, dense %v, labels %v", b.N, b.Dense, b.Y)
	}
	for i, want := range []struct {
		ids            []uint64
		offsets, index []int32
		weights        []float32
	}{
		{[]uint64{7, ^uint64(0)}, []int32{0, 1, 2}, []int32{0, 1}, nil},
		{[]uint64{1, 1 << 63}, []int32{0, 2, 2}, []int32{0, 1}, []float32{0.5, 2}},
	} {
		f := b.Fields[i]
		if !reflect.DeepEqual(f.IDs, want.ids) || !reflect.DeepEqual(f.Offsets, want.offsets) || !reflect.DeepEqual(f.Index, want.index) ||
			len(f.Weights) != len(want.weights) || len(want.weights) > 0 && !reflect.DeepEqual(f.Weights, want.weights) {
			t.Errorf("field %s: ids %v offsets %v index %v weights %v, want %+v", sparseFields[i].Name, f.IDs, f.Offsets, f.Index, f.Weights, want)
		}
	}
	// A field's id twice in a batch is one row, named by both entries.
	ToRecBatch(&b, []Example{{IDs: [][]uint64{{5}, {3, 5}}}, {IDs: [][]uint64{{5}, {3}}}}, 2)
	if f := b.Fields[1]; !reflect.DeepEqual(f.IDs, []uint64{3, 5}) || !reflect.DeepEqual(f.Index, []int32{0, 1, 0}) {
		t.Errorf("repeated ids: ids %v index %v, want [3 5] and [0 1 0]", f.IDs, f.Index)
	}
}
