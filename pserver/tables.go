package pserver

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/jobspec"
)

// tableSet is a shard's embedding tables (sparse issue) and, in sync
// mode, the rows pushed for the step being gathered: a micro-batch's row
// gradients come in their own call (PushRows) before its dense push, and
// are attached to that push when it arrives, so they are summed and
// applied with it, in micro-batch order, exactly once: a repeated
// micro-batch is dropped with its rows, an aborted or rolled-back step
// drops them too.
type tableSet struct {
	byName  map[string]*Table
	names   []string                    // sorted: the fixed order of every loop
	pending map[int]map[string]RowGrads // sync: micro-batch -> table -> rows, of the current step
	base    int64                       // step of the last snapshot a delta may build on (0: none; rowdelta.go)
	chain   int                         // deltas written since the last full base
}

func newTableSet(cfgs []TableConfig) (tableSet, error) {
	ts := tableSet{byName: map[string]*Table{}, pending: map[int]map[string]RowGrads{}}
	for _, c := range cfgs {
		if _, dup := ts.byName[c.Name]; dup {
			return tableSet{}, fmt.Errorf("table %q declared twice", c.Name)
		}
		t, err := NewTable(c)
		if err != nil {
			return tableSet{}, err
		}
		ts.byName[c.Name] = t
		ts.names = append(ts.names, c.Name)
	}
	slices.Sort(ts.names)
	return ts, nil
}

// table is the table name, or an error naming the tables there are.
func (ts *tableSet) table(name string) (*Table, error) {
	t, ok := ts.byName[name]
	if !ok {
		return nil, fmt.Errorf("%w: no table %q (tables: %s)", ErrBadRows, name, strings.Join(ts.names, ", "))
	}
	return t, nil
}

// keep holds micro-batch mb's rows of table until its dense push comes; a
// repeat replaces them (a recomputation has the same values).
func (ts *tableSet) keep(mb int, table string, rows RowGrads) {
	if ts.pending[mb] == nil {
		ts.pending[mb] = map[string]RowGrads{}
	}
	ts.pending[mb][table] = rows
}

// attach gives the dense push g its micro-batch's rows.
func (ts *tableSet) attach(g *Gradient) {
	for name, rows := range ts.pending[g.MicroBatch] {
		if g.rows == nil {
			g.rows = map[string][]RowGrads{}
		}
		g.rows[name] = append(g.rows[name][:0], rows)
	}
}

func (ts *tableSet) dropPending() { clear(ts.pending) }

// addRows appends n's rows after g's: g sums the micro-batches before n.
func (g *Gradient) addRows(n *Gradient) {
	for name, rows := range n.rows {
		if g.rows == nil {
			g.rows = map[string][]RowGrads{}
		}
		g.rows[name] = append(g.rows[name], rows...)
	}
}

// apply updates every table with the step's rows, in micro-batch order.
func (ts *tableSet) apply(grads []*Gradient, records int64) {
	for _, name := range ts.names {
		var pushes []RowGrads
		for _, g := range grads {
			pushes = append(pushes, g.rows[name]...)
		}
		if len(pushes) == 0 {
			continue
		}
		// Checked when pushed (PushRows): nothing here can be refused.
		if err := ts.byName[name].Apply(pushes, records); err != nil {
			panic(fmt.Sprintf("pserver: rows checked when pushed were refused: %v", err))
		}
	}
}

func (ts *tableSet) reset() {
	ts.forgetBase()
	for _, t := range ts.byName {
		_ = t.startOver() // checked when the table was made
	}
}

// Section names of table NAME in a checkpoint: its ids (each as two
// float32 bit patterns, low word first), its rows (values and optimizer
// state, as stored) and adam's counts (bit patterns).
func tableIDsSection(name string) string   { return "table/" + name + "/ids" }
func tableRowsSection(name string) string  { return "table/" + name + "/rows" }
func tableStepsSection(name string) string { return "table/" + name + "/steps" }

// tableSections encodes one table's rows as its checkpoint sections.
func tableSections(name string, ids []uint64, rows []float32, steps []uint32) []checkpoint.Section {
	idBits := make([]float32, 0, 2*len(ids))
	for _, id := range ids {
		idBits = append(idBits, math.Float32frombits(uint32(id)), math.Float32frombits(uint32(id>>32)))
	}
	stepBits := make([]float32, len(steps))
	for i, n := range steps {
		stepBits[i] = math.Float32frombits(n)
	}
	return []checkpoint.Section{{Name: tableIDsSection(name), Data: idBits},
		{Name: tableRowsSection(name), Data: rows},
		{Name: tableStepsSection(name), Data: stepBits}}
}

// decodeTable reads one table's sections back (ok false: the checkpoint
// has no sections of it).
func decodeTable(name string, byName map[string][]float32) (ids []uint64, rows []float32, steps []uint32, ok bool, err error) {
	idBits, ok := byName[tableIDsSection(name)]
	if !ok {
		return nil, nil, nil, false, nil
	}
	if len(idBits)%2 != 0 {
		return nil, nil, nil, true, fmt.Errorf("section %s: %d floats, want an even count: %w", tableIDsSection(name), len(idBits), ErrShapeMismatch)
	}
	ids = make([]uint64, len(idBits)/2)
	for i := range ids {
		ids[i] = uint64(math.Float32bits(idBits[2*i])) | uint64(math.Float32bits(idBits[2*i+1]))<<32
	}
	for _, f := range byName[tableStepsSection(name)] {
		steps = append(steps, math.Float32bits(f))
	}
	return ids, byName[tableRowsSection(name)], steps, true, nil
}

// restore puts every table at a checkpoint's rows; a checkpoint without a
// table's sections (taken before any row was stored, or the step-0
// initial values) leaves it as at step 0 (declared, or a warm start's rows).
func (ts *tableSet) restore(byName map[string][]float32) error {
	ts.forgetBase()
	for _, name := range ts.names {
		t := ts.byName[name]
		ids, rows, steps, ok, err := decodeTable(name, byName)
		switch {
		case err != nil:
			return err
		case !ok:
			_ = t.startOver() // checked when the table was made
			continue
		}
		if err := t.Import(ids, rows, steps); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	return nil
}

// PushRows takes one push's row gradients of table: in async mode they are
// applied at once over records; in sync mode they are micro-batch
// microBatch's of step, kept until its dense push (Push) comes and applied
// with it. Step, rollback epoch and micro-batch are checked as Push checks
// them; so are the rows (ids within the vocabulary, finite values).
func (s *Shard) PushRows(microBatch int, step, rollbackEpoch, records int64, table string, rows RowGrads) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.tables.table(table)
	if err != nil {
		return err
	}
	if err := t.Check(rows); err != nil {
		return err
	}
	if i := nonFinite(rows.Grad); i >= 0 {
		return fmt.Errorf("%w: table %s row value %d is %v", ErrNonFinite, table, i, rows.Grad[i])
	}
	if s.cfg.Mode == jobspec.ModeAsync {
		if records > 0 {
			return t.Apply([]RowGrads{rows}, records)
		}
		return nil
	}
	if err := s.checkStepLocked("rows", microBatch, step, rollbackEpoch); err != nil {
		return err
	}
	s.tables.keep(microBatch, table, rows)
	return nil
}

// PullRows writes the values of table's rows ids into dst (len(ids)*dim)
// and returns the step they are of.
func (s *Shard) PullRows(table string, ids []uint64, dst []float32) (int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, err := s.tables.table(table)
	if err != nil {
		return s.step, err
	}
	return s.step, t.Pull(ids, dst)
}

// TableDim is table's row dimension, or an error naming the tables the
// shard has.
func (s *Shard) TableDim(table string) (int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, err := s.tables.table(table)
	if err != nil {
		return 0, err
	}
	return t.Dim(), nil
}

// TableRows is how many rows table stores (0 for no such table).
func (s *Shard) TableRows(table string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if t := s.tables.byName[table]; t != nil {
		return t.Rows()
	}
	return 0
}

// ExportRows copies the rows table stores (ids, Dim values each) and the
// step they are of.
func (s *Shard) ExportRows(table string) (step int64, ids []uint64, vals []float32, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, err := s.tables.table(table)
	if err != nil {
		return s.step, nil, nil, err
	}
	ids, vals = t.Values()
	return s.step, ids, vals, nil
}

// TableBytes is what the shard's tables hold (Table.Bytes) and their rows.
func (s *Shard) TableBytes() (bytes int64, rows int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, t := range s.tables.byName {
		bytes += t.Bytes()
		rows += t.Rows()
	}
	return bytes, rows
}
