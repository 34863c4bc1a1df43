package dataset

import (
	"bufio"
	"fmt"
	"io"

	"github.com/gtrain/gtrain/internal/atomicfile"
	"github.com/gtrain/gtrain/recordio"
)

// DefaultChunkRecords is the chunk size Convert uses when none is given.
const DefaultChunkRecords = 16

// WriteShard writes examples as one shard at path (atomically: temp file,
// fsync, rename). Every example must have meta.Features features, and a label
// that fits meta.Classes, and the ids of meta.IDFields (none without them). The header's label statistics are the examples'
// (whatever meta.Labels says).
func WriteShard(path string, meta ShardMeta, examples []Example, chunkRecords int) error {
	if err := meta.validate(); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrBadMeta, path, err)
	}
	for i, e := range examples {
		if len(e.Features) != meta.Features {
			return fmt.Errorf("%w: %s: example %d has %d features, the shard %d", ErrExampleSize, path, i, len(e.Features), meta.Features)
		}
		if err := meta.checkLabel(e.Label); err != nil {
			return fmt.Errorf("%s: example %d: %w", path, i, err)
		}
		if err := checkIDs(e, meta.IDFields); err != nil {
			return fmt.Errorf("%w: %s: example %d: %v", ErrExampleSize, path, i, err)
		}
	}
	meta.Labels = labelStats(examples)
	meta.IDMax = idMax(examples, len(meta.IDFields))
	err := atomicfile.WriteFunc(path, 0o644, func(f io.Writer) error {
		buf := bufio.NewWriter(f)
		w, err := recordio.NewWriter(buf, encodeMeta(meta), chunkRecords)
		if err != nil {
			return err
		}
		for _, e := range examples {
			if err := w.Write(EncodeExample(e)); err != nil {
				return err
			}
		}
		if err := w.Close(); err != nil {
			return err
		}
		return buf.Flush()
	})
	if err != nil {
		return fmt.Errorf("dataset: writing %s: %w", path, err)
	}
	return nil
}

// idMax is the largest id of each of fields id fields over examples (nil
// without id fields).
func idMax(examples []Example, fields int) []uint64 {
	if fields == 0 {
		return nil
	}
	out := make([]uint64, fields)
	for _, e := range examples {
		for f, ids := range e.IDs {
			for _, id := range ids {
				out[f] = max(out[f], id)
			}
		}
	}
	return out
}
