package trainer

import (
	"path/filepath"
	"testing"

	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/recordio"
)

func writeShard(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s-train-00000-of-00001")
	var ex []dataset.Example
	for i := 0; i < n; i++ {
		ex = append(ex, dataset.Example{Features: []float32{float32(i)}, Label: float32(i)})
	}
	if err := dataset.WriteShard(path, dataset.ShardMeta{Features: 1, Part: "train"}, ex, 4); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestChunkCacheSlicesAndEvicts(t *testing.T) {
	path := writeShard(t, 10) // chunks of 4, 4, 2
	c := newChunkCache(2)
	got, err := c.appendSlice(nil, path, 1, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Label != 5 || got[2].Label != 7 {
		t.Fatalf("chunk 1 records [1,4): %+v", got)
	}
	if _, err := c.appendSlice(nil, path, 2, 1, 2); err == nil {
		t.Fatal("a slice past the chunk's end was accepted")
	}
	c.get(path, 0)
	c.get(path, 2)
	if len(c.items) != 2 {
		t.Fatalf("cache of 2 holds %d chunks", len(c.items))
	}
	if _, ok := c.items[chunkKey{path, 1}]; ok {
		t.Fatal("the oldest chunk was not evicted")
	}
}

func TestChunkCacheErrors(t *testing.T) {
	path := writeShard(t, 10)
	if _, err := newChunkCache(4).get(path, 7); err == nil {
		t.Fatal("a chunk that does not exist was read")
	}
	if _, err := newChunkCache(4).get(filepath.Join(t.TempDir(), "missing"), 0); err == nil || recordio.IsDamaged(err) {
		t.Fatalf("a missing file must be an error, not damage (which fails the job): %v", err)
	}
}

// Shards stay open across chunk reads, at most maxOpenShards of them: the
// oldest is closed for a new one, and reading it again reopens it.
func TestChunkCacheKeepsShardsOpen(t *testing.T) {
	var paths []string
	for range maxOpenShards + 1 {
		paths = append(paths, writeShard(t, 10))
	}
	c := newChunkCache(1) // every read misses the chunk cache
	defer c.close()
	for round := range 2 {
		for i, p := range paths {
			got, err := c.appendSlice(nil, p, 1, 0, 2)
			if err != nil || len(got) != 2 || got[0].Label != 4 {
				t.Fatalf("round %d shard %d: %+v, %v", round, i, got, err)
			}
			if len(c.shards) > maxOpenShards || c.shards[p] == nil {
				t.Fatalf("round %d shard %d: %d shards open (max %d), this one open: %v", round, i, len(c.shards), maxOpenShards, c.shards[p] != nil)
			}
		}
	}
	if _, ok := c.shards[paths[0]]; ok {
		t.Fatal("the oldest shard was not closed")
	}
}
