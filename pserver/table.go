package pserver

import (
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/client"
)

// ErrBadRows marks row gradients or a row request that cannot be applied:
// an id past the table's vocabulary, a gradient of the wrong length.
var ErrBadRows = errors.New("bad embedding rows")

// TableConfig declares one embedding table of a shard (sparse issue): rows
// of Dim values, keyed by any 64-bit id (below Vocab when it is set), each
// created on first update and initialised from (Seed, Name, id), so that a
// row's first value is the same whichever pserver creates it.
type TableConfig struct {
	Name  string
	Dim   int
	Vocab uint64 // 0: any id
	// InitScale bounds the uniform initial values, ±InitScale (0: 0.05).
	InitScale float32
	Seed      int64
	Optimizer OptimizerConfig
	// Start is the rows the table holds at step 0, a warm start's
	// (init_from): their values, with a zero optimizer state. nil: none.
	Start *model.TableRows
}

// DefaultInitScale is a row's initial values' bound, ±0.05, as common
// embedding layers start.
const DefaultInitScale = 0.05

// tableChunkRows is how many rows one allocation holds: a table grows in
// chunks, never by copying what it holds (no garbage of the size of the
// table while it grows, which a pserver near its memory limit cannot
// afford).
const tableChunkRows = 1 << 14

// Table holds the rows of one embedding table that this shard owns and
// that training has updated. A row never updated is not stored: reading
// it computes its initial values. Updates are lazy per row: only the rows
// a step's gradients name move, and adam counts each row's own updates
// (its bias correction), as lazy embedding optimizers do.
//
// A Table is not safe for concurrent use; the shard's lock guards it.
type Table struct {
	cfg     TableConfig
	opt     Optimizer
	slots   int
	width   int               // floats per row: Dim values, then Dim per slot
	index   map[uint64]uint32 // id -> row number
	rows    int               // rows stored
	ids     [][]uint64        // row number -> id, in chunks as data
	data    [][]float32       // chunks of tableChunkRows rows
	steps   [][]uint32        // adam: each row's update count, in chunks (nil otherwise)
	seed    uint64            // from (Seed, Name): a row's stream starts from it and its id
	slotBuf [][]float32       // Apply's view of one row's slots, kept
	dirty   rowSet            // rows Apply changed since the last checkpoint took them (rowdelta.go)
}

// NewTable declares a table; it allocates nothing until a row is updated.
func NewTable(cfg TableConfig) (*Table, error) {
	if cfg.Dim < 1 {
		return nil, fmt.Errorf("table %q: dim %d: want at least 1", cfg.Name, cfg.Dim)
	}
	if cfg.InitScale == 0 {
		cfg.InitScale = DefaultInitScale
	}
	opt, err := NewOptimizer(cfg.Optimizer)
	if err != nil {
		return nil, fmt.Errorf("table %q: %w", cfg.Name, err)
	}
	if cfg.Optimizer.Kind == OptimizerMomentum {
		// A lazy momentum would move a row by its velocity only on the
		// steps that touch it: not the rule its dense twin follows.
		return nil, fmt.Errorf("table %q: optimizer momentum: want sgd, adagrad or adam (lazy per row)", cfg.Name)
	}
	h := fnv.New64a()
	h.Write([]byte(cfg.Name))
	t := &Table{cfg: cfg, opt: opt, slots: opt.Slots(), width: cfg.Dim * (1 + opt.Slots()), index: map[uint64]uint32{},
		seed: splitmix(h.Sum64() ^ uint64(cfg.Seed))}
	if err := t.startOver(); err != nil {
		return nil, err
	}
	return t, nil
}

// startOver puts the table as it is at step 0: no row stored but a warm
// start's (cfg.Start).
func (t *Table) startOver() error {
	t.Reset()
	s, d := t.cfg.Start, t.cfg.Dim
	if s == nil {
		return nil
	}
	if s.Dim != d || len(s.Vals) != len(s.IDs)*d {
		return fmt.Errorf("%w: table %q: a warm start of %d ids, %d values of dim %d; the table's dim is %d", ErrBadRows, t.cfg.Name, len(s.IDs), len(s.Vals), s.Dim, d)
	}
	for i, id := range s.IDs {
		if err := t.checkID(id); err != nil {
			return err
		}
		if _, dup := t.index[id]; dup {
			return fmt.Errorf("%w: table %q: warm start: id %d twice", ErrBadRows, t.cfg.Name, id)
		}
		copy(t.row(t.add(id))[:d], s.Vals[i*d:(i+1)*d])
	}
	return nil
}

// Rows is how many rows the table stores (those updated at least once).
func (t *Table) Rows() int { return t.rows }

// Bytes is what the stored rows take: values and optimizer state, ids and
// adam's counts, and the index (estimated at 16 bytes per entry).
func (t *Table) Bytes() int64 {
	n := int64(len(t.data)) * tableChunkRows * int64(t.width) * 4
	n += int64(len(t.ids))*tableChunkRows*8 + int64(len(t.steps))*tableChunkRows*4 + int64(len(t.index))*16
	return n
}

// Pull writes the values of rows ids into dst (len(ids)*Dim floats): stored
// rows as they are, others as they would start. It stores nothing.
func (t *Table) Pull(ids []uint64, dst []float32) error {
	d := t.cfg.Dim
	if len(dst) != len(ids)*d {
		return fmt.Errorf("%w: table %q: %d floats for %d rows of %d", ErrBadRows, t.cfg.Name, len(dst), len(ids), d)
	}
	for i, id := range ids {
		if err := t.checkID(id); err != nil {
			return err
		}
		out := dst[i*d : (i+1)*d]
		if r, ok := t.index[id]; ok {
			copy(out, t.row(r)[:d])
		} else {
			t.initRow(id, out)
		}
	}
	return nil
}

// RowGrads is one push's gradient sums for rows of a table: Grad holds
// len(IDs)*Dim floats, row i's at [i*Dim, (i+1)*Dim). An id may repeat (a
// record's field may name it twice); its sums add up.
type RowGrads struct {
	IDs  []uint64
	Grad []float32
}

// Apply applies one step: the pushes' row gradients (sync: in micro-batch
// order, so that the sums have the same bits whoever computed them)
// summed per row, divided by the step's records (the record-weighted mean,
// as for dense parameters) and given to each touched row's optimizer.
func (t *Table) Apply(pushes []RowGrads, records int64) error {
	if records <= 0 {
		return nil
	}
	d := t.cfg.Dim
	order, sums, err := t.sum(pushes)
	if err != nil {
		return err
	}
	inv := float32(1) / float32(records)
	for i := range sums {
		sums[i] *= inv
	}
	for k, id := range order {
		r, ok := t.index[id]
		if !ok {
			r = t.add(id)
		}
		row := t.row(r)
		slots := t.slotBuf[:0]
		for s := range t.slots {
			slots = append(slots, row[d*(1+s):d*(2+s)])
		}
		t.slotBuf = slots
		step := int64(1)
		if t.steps != nil {
			n := &t.steps[r/tableChunkRows][r%tableChunkRows]
			*n++
			step = int64(*n)
		}
		t.opt.Update(row[:d], sums[k*d:(k+1)*d], slots, step)
		t.dirty.add(r)
	}
	return nil
}

// sum adds the pushes' gradients per row, in the order given; order lists
// the rows by first appearance (the order the updates are applied in).
func (t *Table) sum(pushes []RowGrads) (order []uint64, sums []float32, err error) {
	d := t.cfg.Dim
	at := map[uint64]int{}
	for _, p := range pushes {
		if err := t.Check(p); err != nil {
			return nil, nil, err
		}
		for i, id := range p.IDs {
			g := p.Grad[i*d : (i+1)*d]
			k, ok := at[id]
			if !ok {
				at[id] = len(order)
				order = append(order, id)
				sums = append(sums, g...)
				continue
			}
			addInto(sums[k*d:(k+1)*d], g)
		}
	}
	return order, sums, nil
}

func (t *Table) checkID(id uint64) error {
	if t.cfg.Vocab > 0 && id >= t.cfg.Vocab {
		return fmt.Errorf("%w: table %q: id %d past its vocab %d", ErrBadRows, t.cfg.Name, id, t.cfg.Vocab)
	}
	return nil
}

// row is stored row r: its values, then each optimizer slot.
func (t *Table) row(r uint32) []float32 {
	c, off := int(r)/tableChunkRows, int(r)%tableChunkRows*t.width
	return t.data[c][off : off+t.width]
}

// add stores row id at its initial values with a zero optimizer state.
func (t *Table) add(id uint64) uint32 {
	r := uint32(t.rows)
	if t.rows%tableChunkRows == 0 {
		t.data = append(t.data, make([]float32, tableChunkRows*t.width))
		t.ids = append(t.ids, make([]uint64, tableChunkRows))
		if t.cfg.Optimizer.Kind == OptimizerAdam {
			t.steps = append(t.steps, make([]uint32, tableChunkRows))
		}
	}
	t.rows++
	t.ids[r/tableChunkRows][r%tableChunkRows] = id
	t.index[id] = r
	t.initRow(id, t.row(r)[:t.cfg.Dim])
	return r
}

// initRow writes row id's initial values: uniform in ±InitScale from a
// splitmix64 stream that starts at (table seed, id), so any pserver (or a
// trainer, or a test) computes the same.
func (t *Table) initRow(id uint64, dst []float32) {
	x := t.seed ^ splitmix(id)
	scale := t.cfg.InitScale
	for i := range dst {
		x = splitmix(x)
		u := float32(x>>40) / (1 << 24) // 24 random bits: exact in float32
		dst[i] = (2*u - 1) * scale
	}
}

// splitmix is SplitMix64's step: its finalizer applied to x + its increment.
func splitmix(x uint64) uint64 { return client.Mix64(x + 0x9e3779b97f4a7c15) }

// Export copies the stored rows: ids, each row's values and optimizer
// state (width floats per row, as stored) and adam's counts (nil for
// other optimizers), in row order.
func (t *Table) Export() (ids []uint64, rows []float32, steps []uint32) {
	ids = make([]uint64, 0, t.rows)
	rows = make([]float32, 0, t.rows*t.width)
	for r := range t.rows {
		ids = append(ids, t.ids[r/tableChunkRows][r%tableChunkRows])
		rows = append(rows, t.row(uint32(r))...)
		if t.steps != nil {
			steps = append(steps, t.steps[r/tableChunkRows][r%tableChunkRows])
		}
	}
	return ids, rows, steps
}

// Import replaces the stored rows with those Export gave.
func (t *Table) Import(ids []uint64, rows []float32, steps []uint32) error {
	if len(rows) != len(ids)*t.width || t.steps != nil && len(steps) != len(ids) && len(ids) > 0 {
		return fmt.Errorf("%w: table %q: %d ids, %d row floats (want %d each), %d counts", ErrBadRows, t.cfg.Name, len(ids), len(rows), t.width, len(steps))
	}
	t.Reset()
	adam := t.cfg.Optimizer.Kind == OptimizerAdam
	for i, id := range ids {
		if _, dup := t.index[id]; dup {
			return fmt.Errorf("%w: table %q: id %d twice", ErrBadRows, t.cfg.Name, id)
		}
		r := t.add(id)
		copy(t.row(r), rows[i*t.width:(i+1)*t.width])
		if adam {
			t.steps[r/tableChunkRows][r%tableChunkRows] = steps[i]
		}
	}
	return nil
}

// Reset drops every stored row: the table is as declared.
func (t *Table) Reset() {
	t.rows, t.ids, t.data, t.steps = 0, nil, nil, nil
	clear(t.index)
	t.dirty.clear()
}

// Check reports what Apply would refuse in p (a gradient of the wrong
// length, an id past the vocabulary), before it is kept: without summing.
func (t *Table) Check(p RowGrads) error {
	if len(p.Grad) != len(p.IDs)*t.cfg.Dim {
		return fmt.Errorf("%w: table %q: %d gradient floats for %d rows of %d", ErrBadRows, t.cfg.Name, len(p.Grad), len(p.IDs), t.cfg.Dim)
	}
	for _, id := range p.IDs {
		if err := t.checkID(id); err != nil {
			return err
		}
	}
	return nil
}

// Dim is the values per row.
func (t *Table) Dim() int { return t.cfg.Dim }

// Values copies the stored rows' ids and values (Dim per row, no
// optimizer state), in row order.
func (t *Table) Values() (ids []uint64, vals []float32) {
	ids = make([]uint64, 0, t.rows)
	vals = make([]float32, 0, t.rows*t.cfg.Dim)
	for r := range t.rows {
		ids = append(ids, t.ids[r/tableChunkRows][r%tableChunkRows])
		vals = append(vals, t.row(uint32(r))[:t.cfg.Dim]...)
	}
	return ids, vals
}
