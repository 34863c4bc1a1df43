package program

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/program/wire"
)

// Embedding tables of a program (docs/program-protocol.md, "Embedding
// tables"): a program may declare tables named after the records' id
// fields; every batch request then carries, per table, the batch's ids and
// the distinct rows' values, and a gradient answer the gradient sum of each
// distinct row, which the trainer pushes as the built-in recommender's.
//
// Rows travel in the pipe at both protocol versions: they are new memory at
// every micro-batch (other ids), gathered from the pservers' replies into a
// buffer of the trainer's anyway, and small beside the dense parameters
// (records × ids × dim floats), so shared memory would spare one copy of a
// few hundred KiB at most.

// maxTableDim bounds a declared table's row width.
const maxTableDim = 1 << 16

// checkTables checks a declaration's tables against the records' id fields.
func (c *Client) checkTables(ts []wire.Table, idFields []string) ([]jobspec.DeclaredTable, error) {
	var out []jobspec.DeclaredTable
	for i, t := range ts {
		switch {
		case !slices.Contains(idFields, t.Name):
			return nil, c.protocolError("declare", "table %d is named %q, which is no id field of the records (their id fields: %v)", i, t.Name, idFields)
		case slices.ContainsFunc(out, func(d jobspec.DeclaredTable) bool { return d.Name == t.Name }):
			return nil, c.protocolError("declare", "table %q is declared twice", t.Name)
		case t.Dim <= 0 || t.Dim > maxTableDim:
			return nil, c.protocolError("declare", "table %q: dim %d, want 1 to %d", t.Name, t.Dim, maxTableDim)
		}
		switch t.Optimizer {
		case "", jobspec.OptimizerSGD, jobspec.OptimizerAdagrad, jobspec.OptimizerAdam:
		default:
			return nil, c.protocolError("declare", "table %q: optimizer %q, want sgd, adagrad or adam (or none: the job's)", t.Name, t.Optimizer)
		}
		out = append(out, jobspec.DeclaredTable{Name: t.Name, Dim: t.Dim, Optimizer: t.Optimizer})
	}
	return out, nil
}

// Tables are the embedding tables the program declared, in order (nil:
// none). A caller passes rows to GradientRows and EvaluateRows in this
// order.
func (c *Client) Tables() []model.RecTable {
	var out []model.RecTable
	for _, t := range c.tables {
		out = append(out, model.RecTable{Field: t.Name, Dim: t.Dim})
	}
	return out
}

// tableReq is the tables' part of a batch request: a header and the
// payload words per table.
type tableReq struct {
	hs      []wire.TableRows
	payload [][]float32
}

// tableRequest is the tables' part of a batch request of n records (rows[i]
// is table i's, its Rows filled).
func (c *Client) tableRequest(n int, rows []model.RecField) (tableReq, error) {
	var tr tableReq
	if len(rows) != len(c.tables) {
		return tr, fmt.Errorf("program: rows of %d tables given, %d declared", len(rows), len(c.tables))
	}
	for i, f := range rows {
		t := c.tables[i]
		if len(f.Rows) != len(f.IDs)*t.Dim || len(f.Offsets) != n+1 || (len(f.Weights) != 0 && len(f.Weights) != len(f.Index)) {
			return tr, fmt.Errorf("program: table %q: %d values for %d rows of %d, %d offsets for %d records", t.Name, len(f.Rows), len(f.IDs), t.Dim, len(f.Offsets), n)
		}
		w := f.Weights
		if len(w) == 0 {
			w = ones(len(f.Index))
		}
		tr.hs = append(tr.hs, wire.TableRows{Name: t.Name, Dim: t.Dim, Rows: len(f.IDs), Entries: len(f.Index)})
		tr.payload = append(tr.payload, wordsOf(f.IDs, 2), wordsOf(f.Offsets, 1), wordsOf(f.Index, 1), w, f.Rows)
	}
	return tr, nil
}

// rowGradFloats is how many floats the row gradients of hs hold.
func rowGradFloats(hs []wire.TableRows) int {
	n := 0
	for _, h := range hs {
		n += h.GradFloats()
	}
	return n
}

// addRowGrads checks the row gradients of an answer (data, laid out as
// hs) and adds them into rowGrads (one slice per table, Rows long).
func (c *Client) addRowGrads(hs []wire.TableRows, data []float32, rowGrads [][]float32) error {
	if len(rowGrads) != len(hs) {
		return fmt.Errorf("program: %d row gradient buffers given, %d tables", len(rowGrads), len(hs))
	}
	if i := firstNonFinite(data); i >= 0 {
		return c.protocolError("gradient", "row gradient value %d is %v", i, data[i])
	}
	off := 0
	for i, h := range hs {
		g := data[off : off+h.GradFloats()]
		off += len(g)
		if len(rowGrads[i]) != len(g) {
			return fmt.Errorf("program: table %q: row gradient buffer of %d, want %d", h.Name, len(rowGrads[i]), len(g))
		}
		for k, v := range g {
			rowGrads[i][k] += v
		}
	}
	return nil
}

// wordsOf is s's memory as float32 words (per words each element): ids
// and indices travel as their bits.
func wordsOf[T uint64 | int32](s []T, per int) []float32 {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&s[0])), len(s)*per)
}

func ones(n int) []float32 {
	w := make([]float32, n)
	for i := range w {
		w[i] = 1
	}
	return w
}
