package dataset

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/recordio"
)

// FuzzReadShard feeds arbitrary bytes to the shard reader the agent and the
// roles use (ReadShardMeta, ReadChunkExamples), dense shards and shards with
// id fields alike: no panic, no allocation sized
// by a length field beyond the file, and every error names the file and an
// offset.
func FuzzReadShard(f *testing.F) {
	dir := f.TempDir()
	for i, s := range []struct {
		meta     ShardMeta
		examples []Example
		perChunk int
	}{
		{ShardMeta{Features: 2, Part: PartTrain}, []Example{{Features: []float32{1, 2}, Label: 3}, {Features: []float32{4, 5}, Label: 6}}, 1},
		{ShardMeta{Features: 1, Classes: 3, Part: PartTest}, []Example{{Features: []float32{1}, Label: 2}}, 4},
		{ShardMeta{Features: 3, Part: PartTrain}, nil, 1},
		{ShardMeta{Features: 1, Part: PartTrain, IDFields: sparseFields}, sparseExamples(), 2},
		{ShardMeta{Part: PartTest, IDFields: []IDField{{Name: "movie"}}}, []Example{{IDs: [][]uint64{{3, 4}}}}, 1},
	} {
		path := filepath.Join(dir, "seed-"+string(rune('a'+i)))
		if err := WriteShard(path, s.meta, s.examples, s.perChunk); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte("GTRC"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// One file per input in the fuzz's directory: t.TempDir per input
		// stalls the fuzzing workers.
		tmp, err := os.CreateTemp(dir, "shard-")
		if err != nil {
			t.Fatal(err)
		}
		path := tmp.Name()
		defer os.Remove(path)
		_, err = tmp.Write(data)
		if cerr := tmp.Close(); err != nil || cerr != nil {
			t.Fatal(err, cerr)
		}
		_, ix, err := ReadShardMeta(path)
		if err != nil {
			checkShardError(t, path, err)
			return
		}
		for c := range ix.Chunks {
			if _, err := ReadChunkExamples(path, c); err != nil {
				checkShardError(t, path, err)
				return
			}
		}
	})
}

func checkShardError(t *testing.T, path string, err error) {
	t.Helper()
	if !recordio.IsDamaged(err) && !errors.Is(err, ErrBadMeta) && !errors.Is(err, ErrExampleSize) && !errors.Is(err, ErrBadLabel) {
		t.Fatalf("unexpected kind of error: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "offset") {
		t.Fatalf("error does not name the file and an offset: %v", err)
	}
	if len(err.Error()) > 1024 {
		t.Fatalf("error of %d bytes: %.200s...", len(err.Error()), err)
	}
}
