package dataset

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/recordio"
)

func sampleExamples(n, features int) []Example {
	out := make([]Example, n)
	for i := range out {
		f := make([]float32, features)
		for j := range f {
			f[j] = float32(i*features+j) / 8
		}
		out[i] = Example{Features: f, Label: float32(i % 3)}
	}
	return out
}

func equalExamples(a, b []Example) bool {
	return slices.EqualFunc(a, b, func(x, y Example) bool {
		return x.Label == y.Label && slices.Equal(x.Features, y.Features)
	})
}

func TestWriteShardReadBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s-train-00000-of-00001")
	meta := ShardMeta{Features: 2, Classes: 3, Part: PartTrain}
	examples := sampleExamples(10, 2)
	if err := WriteShard(path, meta, examples, 4); err != nil {
		t.Fatal(err)
	}
	gotMeta, ix, err := ReadShardMeta(path)
	if err != nil {
		t.Fatal(err)
	}
	meta.Labels = LabelStats{Min: 0, Max: 2, Whole: true} // labels i%3
	if !reflect.DeepEqual(gotMeta, meta) {
		t.Errorf("meta = %+v, want %+v (the label stats of the examples)", gotMeta, meta)
	}
	if len(ix.Chunks) != 3 || ix.Records() != 10 {
		t.Errorf("index has %d chunks / %d records, want 3 / 10", len(ix.Chunks), ix.Records())
	}
	chunk1, err := ReadChunkExamples(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !equalExamples(chunk1, examples[4:8]) {
		t.Errorf("chunk 1 = %v, want %v", chunk1, examples[4:8])
	}
	all, err := ReadAll([]string{path, path})
	if err != nil {
		t.Fatal(err)
	}
	if !equalExamples(all, append(slices.Clone(examples), examples...)) {
		t.Errorf("ReadAll of the shard twice gave %d examples, not the shard twice", len(all))
	}
	if _, err := ReadChunkExamples(path, 3); !errors.Is(err, recordio.ErrNoChunk) {
		t.Errorf("ReadChunkExamples(chunk 3 of 3) = %v, want recordio.ErrNoChunk", err)
	}
}

func TestWriteShardRejectsBadExamples(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		meta     ShardMeta
		examples []Example
		want     error
	}{
		{"wrong feature count", ShardMeta{Features: 3, Part: PartTrain}, sampleExamples(2, 2), ErrExampleSize},
		{"label not a class", ShardMeta{Features: 2, Classes: 2, Part: PartTrain}, sampleExamples(3, 2), ErrBadLabel},
		{"fractional class label", ShardMeta{Features: 1, Classes: 4, Part: PartTest}, []Example{{Features: []float32{1}, Label: 1.5}}, ErrBadLabel},
		{"no features", ShardMeta{Features: 0, Part: PartTrain}, nil, ErrBadMeta},
		{"unknown part", ShardMeta{Features: 2, Part: "validation"}, nil, ErrBadMeta},
	}
	for _, tt := range tests {
		path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-"))
		if err := WriteShard(path, tt.meta, tt.examples, 4); !errors.Is(err, tt.want) {
			t.Errorf("%s: WriteShard = %v, want %v", tt.name, err, tt.want)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: a rejected shard was written", tt.name)
		}
	}
}

func TestCorruptShardReportsFileAndOffset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s-train-00000-of-00001")
	if err := WriteShard(path, ShardMeta{Features: 3, Part: PartTrain}, sampleExamples(12, 3), 4); err != nil {
		t.Fatal(err)
	}
	_, ix, err := ReadShardMeta(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damaged := ix.Chunks[1]
	data[damaged.Offset+int64(damaged.Length)-2] ^= 0x10 // inside the last record of chunk 1
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}

	if _, err := ReadChunkExamples(path, 0); err != nil {
		t.Errorf("undamaged chunk 0: %v", err)
	}
	for name, read := range map[string]func() error{
		"ReadChunkExamples": func() error { _, err := ReadChunkExamples(path, 1); return err },
		"ReadAll":           func() error { _, err := ReadAll([]string{path}); return err },
	} {
		err := read()
		if !errors.Is(err, recordio.ErrCorrupt) {
			t.Fatalf("%s of a damaged chunk = %v, want recordio.ErrCorrupt", name, err)
		}
		var ce *recordio.CorruptError
		if !errors.As(err, &ce) || ce.File != path || ce.Offset != damaged.Offset {
			t.Errorf("%s: error %v, want file %s offset %d", name, err, path, damaged.Offset)
		}
		if want := fmt.Sprintf("%s: offset %d:", path, damaged.Offset); !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error text %q does not contain %q", name, err, want)
		}
	}
}

// writeRaw writes a record file with arbitrary meta and records, bypassing
// WriteShard's checks, to build shards this package would never write.
func writeRaw(t *testing.T, path string, meta []byte, records ...[]byte) {
	t.Helper()
	var buf bytes.Buffer
	w, err := recordio.NewWriter(&buf, meta, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range records {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadRejectsInconsistentShards(t *testing.T) {
	dir := t.TempDir()
	badMeta := filepath.Join(dir, "bad-meta")
	writeRaw(t, badMeta, []byte("not json"))
	if _, _, err := ReadShardMeta(badMeta); !errors.Is(err, ErrBadMeta) || !strings.Contains(err.Error(), badMeta) {
		t.Errorf("ReadShardMeta(meta not JSON) = %v, want ErrBadMeta naming the file", err)
	}

	wrongSize := filepath.Join(dir, "wrong-size")
	writeRaw(t, wrongSize, []byte(`{"features":2,"classes":0,"part":"train"}`),
		EncodeExample(Example{Features: []float32{1, 2}}), EncodeExample(Example{Features: []float32{1}}))
	_, err := ReadChunkExamples(wrongSize, 0)
	if !errors.Is(err, ErrExampleSize) || !strings.Contains(err.Error(), "record 1") || !strings.Contains(err.Error(), wrongSize) {
		t.Errorf("ReadChunkExamples(short record) = %v, want ErrExampleSize naming file and record", err)
	}

	badLabel := filepath.Join(dir, "bad-label")
	writeRaw(t, badLabel, []byte(`{"features":1,"classes":2,"part":"test"}`), EncodeExample(Example{Features: []float32{1}, Label: 2}))
	if _, err := ReadChunkExamples(badLabel, 0); !errors.Is(err, ErrBadLabel) {
		t.Errorf("ReadChunkExamples(label 2 of 2 classes) = %v, want ErrBadLabel", err)
	}

	two := filepath.Join(dir, "two")
	three := filepath.Join(dir, "three")
	if err := WriteShard(two, ShardMeta{Features: 2, Part: PartTrain}, sampleExamples(1, 2), 2); err != nil {
		t.Fatal(err)
	}
	if err := WriteShard(three, ShardMeta{Features: 3, Part: PartTrain}, sampleExamples(1, 3), 2); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAll([]string{two, three}); !errors.Is(err, ErrMetaMismatch) {
		t.Errorf("ReadAll(2 and 3 features) = %v, want ErrMetaMismatch", err)
	}
	if got, err := ReadAll(nil); err != nil || len(got) != 0 {
		t.Errorf("ReadAll(nil) = %v, %v; want nothing, no error", got, err)
	}
}

func TestGlob(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"p-train-00001-of-00002", "p-train-00000-of-00002", "p-test-00000-of-00001"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Glob(filepath.Join(dir, "p-train-*"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "p-train-00000-of-00002"), filepath.Join(dir, "p-train-00001-of-00002")}
	if !slices.Equal(got, want) {
		t.Errorf("Glob = %v, want %v", got, want)
	}

	pattern := filepath.Join(dir, "nothing-*")
	_, err = Glob(pattern)
	if !errors.Is(err, ErrNoMatch) || !strings.Contains(err.Error(), pattern) {
		t.Errorf("Glob(no match) = %v, want ErrNoMatch naming %q", err, pattern)
	}
	if _, err := Glob("["); err == nil || errors.Is(err, ErrNoMatch) {
		t.Errorf("Glob(malformed pattern) = %v, want a pattern error", err)
	}
}
