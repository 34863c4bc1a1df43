package client

import (
	"context"

	"github.com/gtrain/gtrain/coord"
)

// layout returns the generation, pserver count and blocks Refresh connects
// to: the job's layout record when it moved past the one in use, else the
// one in use.
func (d *Dynamic) layout(ctx context.Context) (gen int64, n int, blocks []Block, err error) {
	l, err := coord.GetLayout(ctx, d.cli, d.job)
	if err != nil {
		return 0, 0, nil, err
	}
	d.mu.Lock()
	gen, n, blocks = d.gen, d.n, d.blocks
	d.mu.Unlock()
	if l.Generation == gen {
		return gen, n, blocks, nil
	}
	blocks, err = Partition(d.sizes, l.Pservers, MaxBlockFloats)
	if err != nil {
		return 0, 0, nil, err
	}
	return l.Generation, l.Pservers, blocks, nil
}

// Servers is the pserver count of the layout in use.
func (d *Dynamic) Servers() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

// Generation is the layout generation in use (0: the spec's).
func (d *Dynamic) Generation() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.gen
}

// Committed is the job's committed layout generation, read from etcd: it
// may be past Generation while the new layout's pservers are not all
// found yet (Refresh waits for them).
func (d *Dynamic) Committed(ctx context.Context) (int64, error) {
	l, err := coord.GetLayout(ctx, d.cli, d.job)
	return l.Generation, err
}

// paramSizes recovers the parameter sizes from a partition of them (a
// parameter without a block is empty; a trailing empty one cuts into no
// block either way).
func paramSizes(blocks []Block) []int {
	var sizes []int
	for _, b := range blocks {
		for len(sizes) <= b.Param {
			sizes = append(sizes, 0)
		}
		sizes[b.Param] += b.Len
	}
	return sizes
}
