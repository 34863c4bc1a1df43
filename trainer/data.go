package trainer

import (
	"fmt"

	"github.com/gtrain/gtrain/dataset"
)

type chunkKey struct {
	file  string
	chunk int
}

// chunkCache keeps recently read chunks: in sync mode consecutive steps read
// neighbouring records of the same chunk. The shards it read are kept open
// (up to maxOpenShards): a chunk not cached costs one read, not an open.
type chunkCache struct {
	max    int
	items  map[chunkKey][]dataset.Example
	order  []chunkKey
	shards map[string]*dataset.ShardReader
	opened []string // in opening order, to close the oldest
}

// maxOpenShards bounds the shard files a trainer keeps open.
const maxOpenShards = 32

func newChunkCache(max int) *chunkCache {
	return &chunkCache{max: max, items: map[chunkKey][]dataset.Example{}, shards: map[string]*dataset.ShardReader{}}
}

// shard returns file's reader, opening it (and closing the oldest open one
// past maxOpenShards) if it is not open.
func (c *chunkCache) shard(file string) (*dataset.ShardReader, error) {
	if r, ok := c.shards[file]; ok {
		return r, nil
	}
	r, err := dataset.OpenShard(file)
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
	for _, r := range c.shards {
		_ = r.Close()
	}
	clear(c.shards)
	c.opened = nil
}

func (c *chunkCache) get(file string, chunk int) ([]dataset.Example, error) {
	k := chunkKey{file, chunk}
	if ex, ok := c.items[k]; ok {
		return ex, nil
	}
	r, err := c.shard(file)
	if err != nil {
		return nil, err
	}
	ex, err := r.ChunkExamples(chunk)
	if err != nil {
		return nil, err
	}
	if len(c.order) >= c.max {
		delete(c.items, c.order[0])
		c.order = c.order[1:]
	}
	c.items[k] = ex
	c.order = append(c.order, k)
	return ex, nil
}

// slice returns count records from first of a chunk.
func (c *chunkCache) slice(file string, chunk, first, count int) ([]dataset.Example, error) {
	ex, err := c.get(file, chunk)
	if err != nil {
		return nil, err
	}
	if first < 0 || count < 0 || first+count > len(ex) {
		return nil, fmt.Errorf("%s chunk %d: records [%d,%d) out of range (chunk has %d)", file, chunk, first, first+count, len(ex))
	}
	return ex[first : first+count], nil
}
