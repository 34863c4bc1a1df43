package pserver

import (
	"fmt"

	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/pserver/client"
)

// RecutRows cuts, out of the table sections the old layout's pservers
// checkpointed at one step (old[j]: pserver j's sections by name; nil for
// one not loaded), the rows of tables that client.RowOwner assigns to
// pserver index of m: each row with its values, optimizer state and adam's
// update count exactly as stored. A row's updates depend on its own
// gradients alone, never on which pserver holds it, so the new pserver
// holds what it would have had it trained with m pservers from the start.
// Every old row must come from the old pserver RowOwner names over
// len(old): one found elsewhere means the files are not one layout's
// (ErrRecut). Rows keep the order of the old pservers, then of each file:
// nothing reads that order (a pass model sorts rows by id). A table no old
// file has sections of is left out: the shard restores it as declared.
// Pure: the caller loads the files.
func RecutRows(tables []string, old []map[string][]float32, index, m int) ([]checkpoint.Section, error) {
	var out []checkpoint.Section
	for _, name := range tables {
		secs, err := recutTable(name, old, index, m)
		if err != nil {
			return nil, err
		}
		out = append(out, secs...)
	}
	return out, nil
}

// recutTable is RecutRows for one table.
func recutTable(name string, old []map[string][]float32, index, m int) ([]checkpoint.Section, error) {
	var (
		ids   []uint64
		rows  []float32
		steps []uint32
		found bool
		width int
	)
	for j, secs := range old {
		oids, orows, osteps, ok, err := decodeTable(name, secs)
		if err != nil {
			return nil, fmt.Errorf("%w: pserver-%d: %w", ErrRecut, j, err)
		}
		found = found || ok
		if len(oids) == 0 {
			continue
		}
		w, err := rowWidth(name, j, len(oids), len(orows), len(osteps), width)
		if err != nil {
			return nil, err
		}
		width = w
		for i, id := range oids {
			if o := client.RowOwner(name, id, len(old)); o != j {
				return nil, fmt.Errorf("%w: table %s row %d is in the checkpoint of pserver-%d, but pserver-%d of %d owns it", ErrRecut, name, id, j, o, len(old))
			}
			if client.RowOwner(name, id, m) != index {
				continue
			}
			ids, rows = append(ids, id), append(rows, orows[i*w:(i+1)*w]...)
			if len(osteps) > 0 {
				steps = append(steps, osteps[i])
			}
		}
	}
	if !found {
		return nil, nil
	}
	return tableSections(name, ids, rows, steps), nil
}

// rowWidth is the floats per row of old pserver j's n rows of table name
// (values and optimizer state), checked against its row floats, its adam
// counts (none or one a row) and the width other pservers' rows had (0:
// none seen yet).
func rowWidth(name string, j, n, floats, counts, seen int) (int, error) {
	w := floats / n
	switch {
	case floats%n != 0 || w == 0:
		return 0, fmt.Errorf("%w: table %s in pserver-%d's checkpoint: %d row floats for %d ids", ErrRecut, name, j, floats, n)
	case counts != 0 && counts != n:
		return 0, fmt.Errorf("%w: table %s in pserver-%d's checkpoint: %d update counts for %d ids", ErrRecut, name, j, counts, n)
	case seen != 0 && w != seen:
		return 0, fmt.Errorf("%w: table %s: pserver-%d's rows have %d floats, another pserver's %d", ErrRecut, name, j, w, seen)
	}
	return w, nil
}
