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
// neighbouring records of the same chunk.
type chunkCache struct {
	max   int
	items map[chunkKey][]dataset.Example
	order []chunkKey
}

func newChunkCache(max int) *chunkCache {
	return &chunkCache{max: max, items: map[chunkKey][]dataset.Example{}}
}

func (c *chunkCache) get(file string, chunk int) ([]dataset.Example, error) {
	k := chunkKey{file, chunk}
	if ex, ok := c.items[k]; ok {
		return ex, nil
	}
	ex, err := dataset.ReadChunkExamples(file, chunk)
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
