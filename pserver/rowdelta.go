package pserver

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/gtrain/gtrain/checkpoint"
)

// Incremental row checkpoints. A step touches few of a table's rows, so a
// checkpoint writes a table's rows in full (a base) only now and then; in
// between it writes the rows Apply changed since the previous checkpoint
// (values, optimizer state, adam's count: a delta), with the same section
// names, and names that checkpoint as its checkpoint.Snapshot.Base.
// Restoring merges the chain oldest first (loadRowChain): a delta's row
// that the base has replaces it in place, a new one is appended, so the
// rows come back in the live table's order, bit for bit. A full base is
// written when there is no previous checkpoint to build on (the first of a
// process, after any restore or reinit, after a failed save), when the
// chain is maxRowChain deltas long, or when more than 1/deltaFullFraction
// of the rows changed. Dense blocks are always written in full.
const (
	maxRowChain       = 8
	deltaFullFraction = 4
)

// rowSet is a bitmap of row numbers: marking one costs a word's or.
type rowSet struct {
	words []uint64
	n     int
}

func (rs *rowSet) add(r uint32) {
	w := int(r / 64)
	if w >= len(rs.words) {
		rs.words = slices.Grow(rs.words, w+1-len(rs.words))[:w+1]
	}
	if bit := uint64(1) << (r % 64); rs.words[w]&bit == 0 {
		rs.words[w] |= bit
		rs.n++
	}
}

func (rs *rowSet) clear() { clear(rs.words); rs.n = 0 }

// each calls f on every row in the set, ascending.
func (rs *rowSet) each(f func(r uint32)) {
	for w, word := range rs.words {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			f(uint32(w*64 + b))
			word &= word - 1
		}
	}
}

// ExportChanged copies the rows Apply changed since the last Export or
// ExportChanged took them, as Export does, in row order.
func (t *Table) ExportChanged() (ids []uint64, rows []float32, steps []uint32) {
	ids = make([]uint64, 0, t.dirty.n)
	rows = make([]float32, 0, t.dirty.n*t.width)
	t.dirty.each(func(r uint32) {
		ids = append(ids, t.ids[r/tableChunkRows][r%tableChunkRows])
		rows = append(rows, t.row(r)...)
		if t.steps != nil {
			steps = append(steps, t.steps[r/tableChunkRows][r%tableChunkRows])
		}
	})
	t.dirty.clear()
	return ids, rows, steps
}

// rowSections is the snapshot of step's table sections and the
// base they are a delta on (0: full). The caller holds the shard's lock.
func (ts *tableSet) rowSections(step int64) ([]checkpoint.Section, int64) {
	full := ts.base <= 0 || ts.base >= step || ts.chain >= maxRowChain || len(ts.names) == 0
	for _, t := range ts.byName {
		full = full || t.dirty.n*deltaFullFraction > t.rows
	}
	base := ts.base
	if full {
		base, ts.chain = 0, 0
	} else {
		ts.chain++
	}
	ts.base = step
	var out []checkpoint.Section
	for _, name := range ts.names {
		t := ts.byName[name]
		var ids []uint64
		var rows []float32
		var steps []uint32
		if full {
			ids, rows, steps = t.Export()
			t.dirty.clear()
		} else {
			ids, rows, steps = t.ExportChanged()
		}
		out = append(out, tableSections(name, ids, rows, steps)...)
	}
	return out, base
}

// forgetBase makes the next checkpoint a full base: the tables no longer
// are the previous checkpoint plus what Apply marked (a restore, a
// reinit), or that checkpoint was not saved.
func (ts *tableSet) forgetBase() { ts.base, ts.chain = 0, 0 }

// ForgetRowBase is forgetBase under the shard's lock: the checkpointer
// calls it when a snapshot's save failed, before releasing it.
func (s *Shard) ForgetRowBase() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tables.forgetBase()
}

// loadRowChain completes a loaded checkpoint whose rows are a delta
// (snap.Base): it loads the chain of bases from store and replaces each
// table's sections by the merged rows, as a full checkpoint of the step
// would hold them. A checkpoint without a base is left as it is.
func loadRowChain(store *checkpoint.Store, snap *checkpoint.Snapshot, tables []string) error {
	chain := []*checkpoint.Snapshot{snap}
	for cur := snap; cur.Base != 0; {
		b, err := store.LoadBase(cur)
		if err != nil {
			return fmt.Errorf("checkpoint step %d is a delta on step %d, which does not load: %w", cur.Step, cur.Base, err)
		}
		chain, cur = append(chain, b), b
	}
	if len(chain) == 1 {
		return nil
	}
	slices.Reverse(chain)
	byName := make([]map[string][]float32, len(chain))
	for i, c := range chain {
		byName[i] = sectionsByName(c.Sections)
	}
	var merged []checkpoint.Section
	for _, name := range tables {
		secs, err := mergeTableChain(name, byName)
		if err != nil {
			return fmt.Errorf("checkpoint step %d: %w", snap.Step, err)
		}
		merged = append(merged, secs...)
	}
	snap.Sections = slices.DeleteFunc(snap.Sections, func(sec checkpoint.Section) bool {
		return slices.ContainsFunc(merged, func(m checkpoint.Section) bool { return m.Name == sec.Name })
	})
	snap.Sections = append(snap.Sections, merged...)
	return nil
}

// mergeTableChain is table name's rows after the chain (a full base, then
// deltas, oldest first): a delta's row replaces the same id's in place,
// a new id is appended.
func mergeTableChain(name string, chain []map[string][]float32) ([]checkpoint.Section, error) {
	ids, rows, steps, ok, err := decodeTable(name, chain[0])
	if err != nil || !ok {
		return nil, err
	}
	at := make(map[uint64]int, len(ids))
	for i, id := range ids {
		at[id] = i
	}
	for _, delta := range chain[1:] {
		dids, drows, dsteps, _, err := decodeTable(name, delta)
		if err != nil {
			return nil, err
		}
		if len(dids) == 0 {
			continue
		}
		w := len(drows) / len(dids)
		if !deltaFits(w, len(ids), len(rows), len(steps), len(dids), len(drows), len(dsteps)) {
			return nil, fmt.Errorf("table %s: a delta's %d rows (%d floats, %d counts) do not fit its base's %d (%d floats, %d counts): %w",
				name, len(dids), len(drows), len(dsteps), len(ids), len(rows), len(steps), ErrShapeMismatch)
		}
		for k, id := range dids {
			i, seen := at[id]
			if !seen {
				i, at[id] = len(ids), len(ids)
				ids, rows = append(ids, id), append(rows, make([]float32, w)...)
				if len(dsteps) > 0 {
					steps = append(steps, 0)
				}
			}
			copy(rows[i*w:(i+1)*w], drows[k*w:(k+1)*w])
			if len(dsteps) > 0 {
				steps[i] = dsteps[k]
			}
		}
	}
	return tableSections(name, ids, rows, steps), nil
}

// deltaFits: a delta's n rows of w floats (and none or n counts) fit a
// base's m rows, whose floats and counts must have the same shape.
func deltaFits(w, m, floats, counts, n, dfloats, dcounts int) bool {
	switch {
	case w == 0 || dfloats != w*n:
		return false
	case dcounts != 0 && dcounts != n:
		return false
	case m == 0:
		return floats == 0 && counts == 0
	}
	return floats == w*m && (counts == m) == (dcounts == n)
}
