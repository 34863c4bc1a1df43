package client

import (
	"fmt"
	"testing"

	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/wire"
)

// TestPackCallsWithinTheWireLimits: a step's tables go to a pserver in as
// few calls as the wire's limits allow, in order; a table past them on its
// own goes alone, as it did in a call of its own.
func TestPackCallsWithinTheWireLimits(t *testing.T) {
	const dim = 16
	perRow := 8 + 4*dim
	full := wire.RowsCallBytes / perRow // rows that fill a call (but for the name)
	for _, c := range []struct {
		rows []int
		want string
	}{
		{[]int{10, 10, 10}, "[[0 3]]"},
		{[]int{full - 1, 10, 10}, "[[0 1] [1 3]]"},
		{[]int{10, full - 15, 10}, "[[0 2] [2 3]]"},
		{[]int{2 * full, 10}, "[[0 1] [1 2]]"},
		{[]int{10, 2 * full, 10}, "[[0 1] [1 2] [2 3]]"},
		{nil, "[]"},
	} {
		if got := fmt.Sprint(pack(t, c.rows, dim)); got != c.want {
			t.Errorf("rows %v (a call holds %d): got %s, want %s", c.rows, full, got, c.want)
		}
	}
	many := make([]int, wire.MaxTablesPerCall+1)
	for i := range many {
		many[i] = 1
	}
	if got, want := fmt.Sprint(pack(t, many, dim)), fmt.Sprintf("[[0 %d] [%d %d]]", wire.MaxTablesPerCall, wire.MaxTablesPerCall, len(many)); got != want {
		t.Errorf("%d tables of a row: got %s, want %s", len(many), got, want)
	}
}

// pack is packCalls for tables of rows[i] rows each, all on pserver 0.
func pack(t *testing.T, rows []int, dim int) [][2]int {
	t.Helper()
	tables, at, fields := make([]model.RecTable, len(rows)), make([][][]int, len(rows)), make([]int, len(rows))
	for i, n := range rows {
		tables[i], at[i], fields[i] = model.RecTable{Field: fmt.Sprint("t", i), Dim: dim}, [][]int{make([]int, n)}, i
	}
	return packCalls(fields, tables, at, 0)
}
