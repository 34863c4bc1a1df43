package recovery

import (
	"slices"
	"testing"

	"github.com/gtrain/gtrain/coord/schema"
)

func TestCheckPservers(t *testing.T) {
	cases := []struct {
		name           string
		steps, epochs  []int64
		master, epoch  int64
		wantConsistent bool
		wantTarget     int64 // when not consistent
	}{
		{"all at the master's step", []int64{7, 7, 7}, []int64{1, 1, 1}, 7, 1, true, 0},
		{"all one step ahead (a commit not saved)", []int64{8, 8}, []int64{0, 0}, 7, 0, true, 0},
		{"a single pserver at the master's step", []int64{7}, []int64{0}, 7, 0, true, 0},
		{"two steps ahead (two commits lost with a master)", []int64{9, 9}, []int64{0, 0}, 7, 0, true, 0},
		{"many steps ahead (commits saved in the background, lost with a master)", []int64{90, 90}, []int64{3, 3}, 7, 3, true, 0},
		{"ahead in an older epoch (another history)", []int64{9, 9}, []int64{0, 0}, 7, 1, false, 9},
		{"behind the master (restored from a checkpoint)", []int64{4, 4}, []int64{0, 0}, 7, 0, false, 4},
		{"apart: the lowest", []int64{8, 4, 7}, []int64{0, 0, 0}, 7, 0, false, 4},
		{"apart around the master's step", []int64{7, 8}, []int64{0, 0}, 7, 0, false, 7},
		{"a pserver in a newer epoch (a rollback cut short)", []int64{7, 7}, []int64{2, 3}, 7, 2, false, 7},
		{"pservers in an older epoch", []int64{7, 7}, []int64{1, 1}, 7, 2, true, 0},
		{"no pserver", nil, nil, 7, 0, true, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			target, consistent := checkPservers(tc.steps, tc.epochs, tc.master, tc.epoch)
			if consistent != tc.wantConsistent || (!consistent && target != tc.wantTarget) {
				t.Fatalf("checkPservers(%v, %v, %d, %d) = (%d, %v), want (%d, %v)",
					tc.steps, tc.epochs, tc.master, tc.epoch, target, consistent, tc.wantTarget, tc.wantConsistent)
			}
		})
	}
}

func TestPserverAhead(t *testing.T) {
	cases := []struct {
		epochs    []int64
		master    int64
		wantIndex int
		wantAhead bool
	}{
		{[]int64{2, 2, 2}, 2, 0, false},
		{[]int64{1, 0, 2}, 2, 0, false},
		{[]int64{2, 3, 4}, 2, 1, true},
		{nil, 0, 0, false},
	}
	for _, tc := range cases {
		if i, ahead := pserverAhead(tc.epochs, tc.master); i != tc.wantIndex || ahead != tc.wantAhead {
			t.Errorf("pserverAhead(%v, %d) = (%d, %v), want (%d, %v)", tc.epochs, tc.master, i, ahead, tc.wantIndex, tc.wantAhead)
		}
	}
}

func TestRollbackTargetAndEpoch(t *testing.T) {
	g := schema.GlobalCheckpoint{Step: 30, Steps: []int64{10, 20, 30}}
	targets := []struct {
		name      string
		g         schema.GlobalCheckpoint
		requested int64
		want      int64
		ok        bool
	}{
		{"the newest", g, -1, 30, true},
		{"an older one still kept", g, 20, 20, true},
		{"the start", g, 0, 0, true},
		{"not a global checkpoint: the newest below it", g, 25, 20, false},
		{"above the newest: the newest", g, 35, 30, false},
		{"below every one kept: the start", g, 5, 0, false},
		{"none yet: the start", schema.GlobalCheckpoint{}, -1, 0, true},
	}
	for _, tc := range targets {
		if got, ok := rollbackTarget(tc.g, tc.requested); got != tc.want || ok != tc.ok {
			t.Errorf("%s: rollbackTarget(%d) = (%d, %v), want (%d, %v)", tc.name, tc.requested, got, ok, tc.want, tc.ok)
		}
	}
	epochs := []struct {
		master   int64
		pservers []int64
		want     int64
	}{
		{0, []int64{0, 0}, 1},
		{3, []int64{1, 2}, 4},
		{3, []int64{5, 2}, 6}, // above an interrupted rollback's epoch
		{2, nil, 3},
	}
	for _, tc := range epochs {
		if got := nextEpoch(tc.master, tc.pservers); got != tc.want {
			t.Errorf("nextEpoch(%d, %v) = %d, want %d", tc.master, tc.pservers, got, tc.want)
		}
	}
}

func TestDeclareGlobal(t *testing.T) {
	g := schema.GlobalCheckpoint{Step: 20, Pass: 1, Steps: []int64{10, 20}}
	cases := []struct {
		name   string
		step   int64
		marks  int64
		keep   int
		ok     bool
		wantSt []int64
	}{
		{"every participant marked it", 30, 3, 3, true, []int64{10, 20, 30}},
		{"the oldest falls out", 30, 3, 2, true, []int64{20, 30}},
		{"keep one", 30, 3, 1, true, []int64{30}},
		{"a mark missing", 30, 2, 3, false, nil},
		{"not newer", 20, 3, 3, false, nil},
		{"older", 15, 3, 3, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(g.Steps)
			got, ok := declareGlobal(g, tc.step, tc.marks, 3, 4, tc.keep)
			if ok != tc.ok || !slices.Equal(g.Steps, before) {
				t.Fatalf("declareGlobal ok %v (input steps now %v), want %v", ok, g.Steps, tc.ok)
			}
			if ok && (got.Step != tc.step || got.Pass != 4 || !slices.Equal(got.Steps, tc.wantSt)) {
				t.Fatalf("declareGlobal = %+v, want step %d pass 4 steps %v", got, tc.step, tc.wantSt)
			}
		})
	}
}

func TestRolledBackGlobal(t *testing.T) {
	g := schema.GlobalCheckpoint{Step: 30, Pass: 2, Steps: []int64{10, 20, 30}}
	cases := []struct {
		target int64
		want   []int64
	}{
		{30, []int64{10, 20, 30}},
		{20, []int64{10, 20}},
		{0, nil},
	}
	for _, tc := range cases {
		got := rolledBackGlobal(g, tc.target)
		if got.Step != tc.target || got.Pass != g.Pass || !slices.Equal(got.Steps, tc.want) {
			t.Errorf("rolledBackGlobal(%d) = %+v, want step %d, pass %d, steps %v", tc.target, got, tc.target, g.Pass, tc.want)
		}
	}
}

// olderTarget: a rollback whose target cannot be restored falls back to
// the newest kept global checkpoint below it, then to the start.
func TestOlderTarget(t *testing.T) {
	g := schema.GlobalCheckpoint{Step: 30, Steps: []int64{10, 20, 30}}
	cases := []struct {
		target, want int64
		ok           bool
	}{
		{30, 20, true}, {20, 10, true}, {10, 0, true}, {25, 20, true}, {0, 0, false},
	}
	for _, c := range cases {
		if got, ok := olderTarget(g, c.target); got != c.want || ok != c.ok {
			t.Errorf("olderTarget(%v, %d) = %d, %v; want %d, %v", g.Steps, c.target, got, ok, c.want, c.ok)
		}
	}
	if got, ok := olderTarget(schema.GlobalCheckpoint{}, 5); got != 0 || !ok {
		t.Errorf("olderTarget without checkpoints = %d, %v; want the start", got, ok)
	}
}
