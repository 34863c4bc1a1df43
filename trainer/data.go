package trainer

import (
	"fmt"
	"os"
	"sync"

	"github.com/gtrain/gtrain/dataset"
)

type chunkKey struct {
	file  string
	chunk int
}

// chunkCache keeps recently read chunks: in sync mode consecutive steps read
// neighbouring records of the same chunk. It keeps their records undecoded
// and decodes those asked for: a sync trainer computes a few shuffled
// records of each chunk (the other trainers the rest). The shards it read
// are kept open (up to maxOpenShards): a chunk not cached costs one read,
// not an open. get, appendSlice and close may be called from several
// goroutines (the read of a hint runs beside the next work's: hint.go);
// the others need mu held.
type chunkCache struct {
	mu     sync.Mutex
	closed bool // close was called: a late read (a hint's) opens nothing
	max    int
	items  map[chunkKey][][]byte
	order  []chunkKey
	shards map[string]*dataset.ShardReader
	opened []string // in opening order, to close the oldest
	// open opens a shard: os.Open, or the job's confine.Roots.Open.
	open dataset.Opener
}

// maxOpenShards bounds the shard files a trainer keeps open.
const maxOpenShards = 32

func newChunkCache(max int) *chunkCache {
	return &chunkCache{max: max, items: map[chunkKey][][]byte{}, shards: map[string]*dataset.ShardReader{}, open: os.Open}
}

// shard returns file's reader, opening it (and closing the oldest open one
// past maxOpenShards) if it is not open.
func (c *chunkCache) shard(file string) (*dataset.ShardReader, error) {
	if r, ok := c.shards[file]; ok {
		return r, nil
	}
	if c.closed {
		return nil, fmt.Errorf("%s: the trainer is stopping", file)
	}
	r, err := dataset.OpenShard(c.open, file)
	if err != nil {
		return nil, err
	}
	if len(c.opened) >= maxOpenShards {
		_ = c.shards[c.opened[0]].Close() // read-only: nothing to lose
		delete(c.shards, c.opened[0])
		c.opened = c.opened[1:]
	}
	c.shards[file] = r
	c.opened = append(c.opened, file)
	return r, nil
}

// close closes the open shards.
func (c *chunkCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, r := range c.shards {
		_ = r.Close()
	}
	clear(c.shards)
	c.opened = nil
}

// records returns the undecoded records of a chunk and its shard's reader.
func (c *chunkCache) records(file string, chunk int) ([][]byte, *dataset.ShardReader, error) {
	r, err := c.shard(file)
	if err != nil {
		return nil, nil, err
	}
	k := chunkKey{file, chunk}
	if recs, ok := c.items[k]; ok {
		return recs, r, nil
	}
	recs, err := r.ChunkRecords(chunk)
	if err != nil {
		return nil, nil, err
	}
	if len(c.order) >= c.max {
		delete(c.items, c.order[0])
		c.order = c.order[1:]
	}
	c.items[k] = recs
	c.order = append(c.order, k)
	return recs, r, nil
}

// get returns every record of a chunk, decoded.
func (c *chunkCache) get(file string, chunk int) ([]dataset.Example, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	recs, r, err := c.records(file, chunk)
	if err != nil {
		return nil, err
	}
	return decodeRange(nil, r, recs, chunk, 0, len(recs))
}

// appendSlice appends count records from first of a chunk, decoded, to dst.
func (c *chunkCache) appendSlice(dst []dataset.Example, file string, chunk, first, count int) ([]dataset.Example, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	recs, r, err := c.records(file, chunk)
	if err != nil {
		return nil, err
	}
	if first < 0 || count < 0 || first+count > len(recs) {
		return nil, fmt.Errorf("%s chunk %d: records [%d,%d) out of range (chunk has %d)", file, chunk, first, first+count, len(recs))
	}
	return decodeRange(dst, r, recs, chunk, first, count)
}

// decodeRange appends recs[first:first+count] of chunk, decoded by r, to dst.
func decodeRange(dst []dataset.Example, r *dataset.ShardReader, recs [][]byte, chunk, first, count int) ([]dataset.Example, error) {
	for i := first; i < first+count; i++ {
		e, err := r.DecodeRecord(chunk, i, recs[i])
		if err != nil {
			return nil, err
		}
		dst = append(dst, e)
	}
	return dst, nil
}
