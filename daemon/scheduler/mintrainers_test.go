package scheduler

import (
	"strings"
	"testing"
)

// TestPlaceJobWithFewerTrainers: a new job whose trainers do not all fit
// starts with what fits when that is at least its min; below min nothing is
// placed. Spread (with a checkpoint.dir) and one-node jobs alike.
func TestPlaceJobWithFewerTrainers(t *testing.T) {
	small := Request{CPU: 0.1}
	one := Request{CPU: 1}
	w, r := testWorkers(1, 4, small, one, one) // master, pserver-0, trainer-0..3
	nodes := []nodeView{ready("n1", 2.1, 8*gi), ready("n2", 1, 8*gi)}
	cases := []struct {
		name     string
		oneNode  bool
		min      int
		trainers []string // placed
		reason   string   // a substring
	}{
		{"spread: 2 of 4 fit, min 2", false, 2, []string{"trainer-0", "trainer-1"}, "runs with 2 of 4 trainers (min 2); needs 2 cpu for 2 trainers"},
		{"spread: 2 of 4 fit, min 3: waits", false, 3, nil, "waits: 2 of 4 trainers fit, min 3; needs 2 cpu for 2 trainers"},
		{"spread: fixed count: waits", false, 4, nil, "waits: 2 of 4 trainers fit, min 4; needs 2 cpu"},
		{"one node: 1 of 4 fits, min 1", true, 1, []string{"trainer-0"}, "runs with 1 of 4 trainers: node n1 has no room for more (min 1)"},
		{"one node: min 2: waits", true, 2, nil, "needs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := placeJob(placeInput{Workers: w, Requests: r, Nodes: nodes, OneNode: tc.oneNode, MinTrainers: tc.min})
			var placed []string
			for _, x := range w {
				if _, ok := out.Placement[x]; ok && roleOf(x) == "trainer" {
					placed = append(placed, x)
				}
			}
			if strings.Join(placed, ",") != strings.Join(tc.trainers, ",") || !strings.Contains(out.Reason, tc.reason) {
				t.Fatalf("placed trainers %v (%v), reason %q; want %v and %q", placed, out.Placement, out.Reason, tc.trainers, tc.reason)
			}
			if len(tc.trainers) > 0 && (out.Placement["master"] == "" || out.Placement["pserver-0"] == "") {
				t.Fatalf("a job that runs needs its master and pservers: %v", out.Placement)
			}
		})
	}
}
