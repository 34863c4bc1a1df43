package program

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/model"
)

var rowsFields = []string{"movie", "genre", "user"}

func startRows(t *testing.T, mode string, pipe bool) (*Client, *Declaration, error) {
	t.Helper()
	c := startEntry(t, "program/testdata", []string{python, "rows.py", mode}, Config{Pipe: pipe})
	d, err := c.Declare(context.Background(), DeclareArgs{Seed: 1, Inputs: 1, Outputs: 1, IDFields: rowsFields})
	return c, d, err
}

// rowsBatch is 3 records' ids of the tables user (dim 3) and movie (dim
// 4), with the rows' values as pulled: row u's values are 10u+k.
func rowsBatch() (model.Batch, []model.RecField) {
	b := model.Batch{N: 3, Inputs: 1, X: []float32{1, 2, 3}, Y: []float32{1, 0, 1}}
	var user, movie model.RecField
	user.Append([]uint64{7001, 42}, nil)
	user.Append([]uint64{42}, nil)
	user.Append(nil, nil)
	movie.Append([]uint64{5}, []float32{0.5})
	movie.Append([]uint64{1234567, 5, 5}, []float32{1, 2, 0.25})
	movie.Append([]uint64{9}, []float32{3})
	for _, f := range []struct {
		f   *model.RecField
		dim int
	}{{&user, 3}, {&movie, 4}} {
		f.f.SizeRows(f.dim)
		for i := range f.f.Rows {
			f.f.Rows[i] = float32(10*(i/f.dim) + i%f.dim)
		}
	}
	return b, []model.RecField{user, movie}
}

// TestProgramRows: a program declares tables, receives each batch's ids,
// entries, weights and rows, and answers a gradient per distinct row, the
// same through the pipe and through shared memory; evaluate gets the rows
// too; a batch without the rows is refused before the program sees it.
func TestProgramRows(t *testing.T) {
	ctx := context.Background()
	for _, pipe := range []bool{true, false} {
		c, d, err := startRows(t, "ok", pipe)
		if err != nil {
			t.Fatal(err)
		}
		want := []jobspec.DeclaredTable{{Name: "user", Dim: 3}, {Name: "movie", Dim: 4, Optimizer: "adagrad"}}
		if len(d.Tables) != 2 || d.Tables[0] != want[0] || d.Tables[1] != want[1] || d.Record().Tables[1] != want[1] {
			t.Fatalf("tables %+v, want %+v", d.Tables, want)
		}
		if c.Shared() == pipe {
			t.Fatalf("shared memory %v with pipe %v", c.Shared(), pipe)
		}
		b, rows := rowsBatch()
		grads := zeros(d.Params)
		if c.Shared() {
			_, grads = c.Buffers()
		}
		rowGrads := [][]float32{make([]float32, 2*3), make([]float32, 3*4)}
		if _, err := c.GradientRows(ctx, Step{}, d.Params, d.Init, b, rows, grads, rowGrads); err != nil {
			t.Fatal(err)
		}
		// Per distinct row: the weights of its entries, its id mod 1000,
		// twice its value in column 2. user: 7001 (once), 42 (twice);
		// movie: 5 (0.5+2+0.25), 1234567 (1), 9 (3).
		wantRows := [][]float32{
			{1, 1, 4, 2, 42, 24},
			{2.75, 5, 4, 0, 1, 567, 24, 0, 3, 9, 44, 0},
		}
		for i, w := range wantRows {
			if !slices.Equal(rowGrads[i], w) {
				t.Errorf("pipe %v: table %s: row gradients %v, want %v", pipe, d.Tables[i].Name, rowGrads[i], w)
			}
		}
		if grads[0][0] != 8 {
			t.Errorf("pipe %v: b's gradient %v, want the 8 entries", pipe, grads[0][0])
		}
		// Σ weight × the row's sum: user 3+33+33, movie 0.5×6+46+2×6+0.25×6+3×86.
		if loss, _, err := c.EvaluateRows(ctx, d.Params, d.Init, b, rows); err != nil || loss != 389.5 {
			t.Errorf("pipe %v: evaluate: loss %v (%v), want 389.5", pipe, loss, err)
		}
		if _, err := c.GradientAt(ctx, Step{}, d.Params, d.Init, b, grads); err == nil || !strings.Contains(err.Error(), "rows of 0 tables given, 2 declared") {
			t.Errorf("a gradient without rows: %v", err)
		}
	}
}

// TestProgramRowsRefused: tables that are no id field or named twice are
// refused at declare, naming the table; a row gradient answer of the wrong
// size or with a NaN fails the request.
func TestProgramRowsRefused(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ mode, inText string }{
		{"no-field", `table 0 is named "nosuch", which is no id field of the records (their id fields: [movie genre user])`},
		{"twice", `table "user" is declared twice`},
	} {
		_, _, err := startRows(t, tc.mode, false)
		if !IsProgramError(err) || !strings.Contains(err.Error(), tc.inText) {
			t.Errorf("%s: got %v, want a program error with %q", tc.mode, err, tc.inText)
		}
	}
	for _, tc := range []struct {
		mode, inText string
		pipe         bool
	}{
		{"short", "the answer announces 18 floats, want 19", true},
		{"short", "the answer announces 17 floats, want 18", false},
		{"nan", "row gradient value 0 is NaN", true},
		{"nan", "row gradient value 0 is NaN", false},
	} {
		c, d, err := startRows(t, tc.mode, tc.pipe)
		if err != nil {
			t.Fatal(err)
		}
		b, rows := rowsBatch()
		_, err = c.GradientRows(ctx, Step{}, d.Params, d.Init, b, rows, zeros(d.Params), [][]float32{make([]float32, 6), make([]float32, 12)})
		if !IsProgramError(err) || !strings.Contains(err.Error(), tc.inText) {
			t.Errorf("%s (pipe %v): got %v, want a program error with %q", tc.mode, tc.pipe, err, tc.inText)
		}
	}
}
