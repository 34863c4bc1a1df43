package pserver

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/pserver/client"
)

// ErrRecut is returned by Recut when the old cut's sections do not cover a
// new block.
var ErrRecut = errors.New("old checkpoints do not cover the new block")

// Recut cuts the checkpoint sections of a new partition's blocks (want)
// out of those of an old partition of the same parameters (old, with the
// sections of the old blocks by name, from one step). Parameters and every
// optimizer slot are per element (SGD, momentum, Adagrad, Adam; Adam's step
// count is the step itself, not shard state), so each element is copied
// from wherever the old cut kept it and the result is what the new
// pservers would hold had they trained from the start. Pure: the caller
// loads the old files.
func Recut(old []client.Block, sections map[string][]float32, want []client.Block, slots int) ([]checkpoint.Section, error) {
	byParam := map[int][]client.Block{}
	for _, b := range old {
		byParam[b.Param] = append(byParam[b.Param], b)
	}
	var out []checkpoint.Section
	for _, nb := range want {
		names := []func(int) string{paramSection}
		for k := range slots {
			names = append(names, func(id int) string { return slotSection(id, k) })
		}
		for _, name := range names {
			data := make([]float32, nb.Len)
			if err := fill(data, nb, byParam[nb.Param], sections, name); err != nil {
				return nil, err
			}
			out = append(out, checkpoint.Section{Name: name(nb.ID), Data: data})
		}
	}
	return out, nil
}

// fill copies into dst (block nb) the overlapping elements of the old
// blocks of the same parameter, section name(old block ID); every element
// must be covered.
func fill(dst []float32, nb client.Block, old []client.Block, sections map[string][]float32, name func(int) string) error {
	covered := 0
	for _, ob := range old {
		lo, hi := max(nb.Offset, ob.Offset), min(nb.Offset+nb.Len, ob.Offset+ob.Len)
		if lo >= hi {
			continue
		}
		src, ok := sections[name(ob.ID)]
		if !ok || len(src) != ob.Len {
			return fmt.Errorf("%w: section %s missing or not %d floats", ErrRecut, name(ob.ID), ob.Len)
		}
		copy(dst[lo-nb.Offset:hi-nb.Offset], src[lo-ob.Offset:hi-ob.Offset])
		covered += hi - lo
	}
	if covered != nb.Len {
		return fmt.Errorf("%w: block %d (param %d, offset %d) has %d of %d floats", ErrRecut, nb.ID, nb.Param, nb.Offset, covered, nb.Len)
	}
	return nil
}

// sourcesOf lists, ascending, the old servers holding any element of want.
func sourcesOf(old, want []client.Block) []int {
	var out []int
	seen := map[int]bool{}
	for _, ob := range old {
		for _, nb := range want {
			if ob.Param == nb.Param && max(nb.Offset, ob.Offset) < min(nb.Offset+nb.Len, ob.Offset+ob.Len) && !seen[ob.Server] {
				seen[ob.Server] = true
				out = append(out, ob.Server)
			}
		}
	}
	slices.Sort(out)
	return out
}
