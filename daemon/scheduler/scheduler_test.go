package scheduler

import (
	"maps"
	"slices"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/jobspec"
)

// testWorkers is a job of one master, p pservers and t trainers with the
// given requests.
func testWorkers(p, t int, master, pserver, trainer Request) ([]string, map[string]Request) {
	workers := []string{"master"}
	reqs := map[string]Request{"master": master}
	for i := range p {
		w := "pserver-" + string(rune('0'+i))
		workers = append(workers, w)
		reqs[w] = pserver
	}
	for i := range t {
		w := "trainer-" + string(rune('0'+i))
		workers = append(workers, w)
		reqs[w] = trainer
	}
	return workers, reqs
}

func ready(name string, cpu float64, memory int64) nodeView {
	return nodeView{Name: name, State: api.NodeReady, Free: Request{CPU: cpu, Memory: memory}}
}

const gi = 1 << 30

// placeCase is a placement problem and the placement and reason wanted.
type placeCase struct {
	name   string
	in     placeInput
	want   map[string]string
	reason string
}

func runPlaceCases(t *testing.T, tests []placeCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := placeJob(tt.in)
			if !maps.Equal(got.Placement, tt.want) || got.Reason != tt.reason {
				t.Errorf("placeJob =\n  %v\n  %q\nwant\n  %v\n  %q", got.Placement, got.Reason, tt.want, tt.reason)
			}
		})
	}
}

func TestPlaceJob(t *testing.T) {
	small := Request{CPU: 0.1}
	one := Request{CPU: 1, Memory: 512 << 20}
	w5, r5 := testWorkers(2, 3, small, one, one)
	w3, r3 := testWorkers(1, 1, small, one, one)
	down := nodeView{Name: "n3", State: api.NodeDown, Free: Request{CPU: 8, Memory: 8 * gi}}
	draining := nodeView{Name: "n3", State: api.NodeDraining, Free: Request{CPU: 8, Memory: 8 * gi}}
	tests := []placeCase{
		{"spread over equal nodes: pservers apart, trainers apart, master first",
			placeInput{Workers: w5, Requests: r5, Nodes: []nodeView{ready("n1", 4, 8*gi), ready("n2", 4, 8*gi), ready("n3", 4, 8*gi)}},
			map[string]string{"master": "n1", "pserver-0": "n2", "pserver-1": "n3", "trainer-0": "n1", "trainer-1": "n2", "trainer-2": "n3"}, ""},
		{"one node takes everything that fits",
			placeInput{Workers: w5, Requests: r5, Nodes: []nodeView{ready("n1", 6, 8*gi)}},
			map[string]string{"master": "n1", "pserver-0": "n1", "pserver-1": "n1", "trainer-0": "n1", "trainer-1": "n1", "trainer-2": "n1"}, ""},
		{"capacity decides: the full node gets nothing",
			placeInput{Workers: w3, Requests: r3, Nodes: []nodeView{ready("n1", 0.05, 8*gi), ready("n2", 4, 8*gi)}},
			map[string]string{"master": "n2", "pserver-0": "n2", "trainer-0": "n2"}, ""},
		{"short of cpu: nothing placed, the reason names what and where",
			placeInput{Workers: w5, Requests: r5, Nodes: []nodeView{ready("n1", 0.6, 8*gi), ready("n2", 1, 8*gi), down}},
			map[string]string{},
			"needs 2 cpu, 1Gi for 2 pservers (1 cpu, 512Mi each) and 3 cpu, 1.5Gi for 3 trainers (1 cpu, 512Mi each); " +
				"free: n1 0.6 cpu, 8Gi, n2 1 cpu, 8Gi; n3 down"},
		{"short of memory",
			placeInput{Workers: w3, Requests: r3, Nodes: []nodeView{ready("n1", 8, 100<<20)}},
			map[string]string{},
			"needs 1 cpu, 512Mi for pserver (1 cpu, 512Mi each) and 1 cpu, 512Mi for trainer (1 cpu, 512Mi each); free: n1 8 cpu, 100Mi"},
		{"no node at all",
			placeInput{Workers: w3, Requests: r3},
			map[string]string{},
			"needs 0.1 cpu for master (0.1 cpu each) and 1 cpu, 512Mi for pserver (1 cpu, 512Mi each) and 1 cpu, 512Mi for trainer (1 cpu, 512Mi each); " +
				"no node has registered: start an agent (gtraind agent)"},
		{"workers stay on a ready node even when it now looks full",
			placeInput{Workers: w3, Requests: r3, Current: map[string]string{"master": "n1", "pserver-0": "n1", "trainer-0": "n1"},
				Nodes: []nodeView{ready("n1", 0, 0), ready("n2", 8, 8*gi)}},
			map[string]string{"master": "n1", "pserver-0": "n1", "trainer-0": "n1"}, ""},
		{"workers of a down node move; the others stay",
			placeInput{Workers: w3, Requests: r3, Current: map[string]string{"master": "n1", "pserver-0": "n3", "trainer-0": "n3"},
				Nodes: []nodeView{ready("n1", 1, 8*gi), ready("n2", 4, 8*gi), down}},
			map[string]string{"master": "n1", "pserver-0": "n2", "trainer-0": "n2"}, ""},
		{"workers of a draining node move",
			placeInput{Workers: w3, Requests: r3, Current: map[string]string{"master": "n3", "pserver-0": "n3", "trainer-0": "n1"},
				Nodes: []nodeView{ready("n1", 4, 8*gi), ready("n2", 4, 8*gi), draining}},
			map[string]string{"master": "n2", "pserver-0": "n1", "trainer-0": "n1"}, ""},
		{"a running job keeps what it can when a moved worker finds no room",
			placeInput{Workers: w3, Requests: r3, Current: map[string]string{"master": "n1", "pserver-0": "n3", "trainer-0": "n1"},
				Nodes: []nodeView{ready("n1", 0.5, 8*gi), down}},
			map[string]string{"master": "n1", "trainer-0": "n1"},
			"needs 1 cpu, 512Mi for pserver (1 cpu, 512Mi each); free: n1 0.5 cpu, 8Gi; n3 down"},
	}
	runPlaceCases(t, tests)
}

// A job without checkpoint.dir runs on one node and never leaves it.
func TestPlaceJobOnOneNode(t *testing.T) {
	w3, r3 := testWorkers(1, 1, Request{CPU: 0.1}, Request{CPU: 1, Memory: 512 << 20}, Request{CPU: 1, Memory: 512 << 20})
	down := nodeView{Name: "n3", State: api.NodeDown, Free: Request{CPU: 8, Memory: 8 * gi}}
	draining := nodeView{Name: "n3", State: api.NodeDraining, Free: Request{CPU: 8, Memory: 8 * gi}}
	tests := []placeCase{
		{"the whole job goes on the node with most room",
			placeInput{Workers: w3, Requests: r3, OneNode: true, Nodes: []nodeView{ready("n1", 2.1, 8*gi), ready("n2", 3, 8*gi)}},
			map[string]string{"master": "n2", "pserver-0": "n2", "trainer-0": "n2"}, ""},
		{"a job that fits no single node waits",
			placeInput{Workers: w3, Requests: r3, OneNode: true, Nodes: []nodeView{ready("n1", 2, 8*gi), ready("n2", 2, 8*gi)}},
			map[string]string{},
			"needs 2.1 cpu, 1Gi on one node for the whole job (without checkpoint.dir its checkpoints stay on one node's disk, " +
				"so it cannot span nodes); free: n1 2 cpu, 8Gi, n2 2 cpu, 8Gi"},
		{"a job waits for its down node",
			placeInput{Workers: w3, Requests: r3, OneNode: true, Current: map[string]string{"master": "n3", "pserver-0": "n3", "trainer-0": "n3"},
				Nodes: []nodeView{ready("n1", 8, 8*gi), down}},
			map[string]string{"master": "n3", "pserver-0": "n3", "trainer-0": "n3"},
			"waiting for node n3 (down): its checkpoints are on n3's local disk (checkpoint.dir is not set), so it can run nowhere else; " +
				"give jobs that must survive a node a checkpoint.dir on shared storage"},
		{"a job stays on its draining node",
			placeInput{Workers: w3, Requests: r3, OneNode: true, Current: map[string]string{"master": "n3", "pserver-0": "n3", "trainer-0": "n3"},
				Nodes: []nodeView{ready("n1", 8, 8*gi), draining}},
			map[string]string{"master": "n3", "pserver-0": "n3", "trainer-0": "n3"},
			"cannot move off draining node n3: its checkpoints are on n3's local disk (checkpoint.dir is not set); it stays there until it ends"},
	}
	runPlaceCases(t, tests)
}

// The same problem gives the same placement, whatever order the nodes come
// in, and placing never changes the caller's node views.
func TestPlaceJobIsDeterministic(t *testing.T) {
	workers, reqs := testWorkers(3, 5, Request{CPU: 0.1}, Request{CPU: 1}, Request{CPU: 0.5})
	nodes := []nodeView{ready("a", 3, gi), ready("b", 3, 2*gi), ready("c", 2, gi), ready("d", 3, 2*gi)}
	first := placeJob(placeInput{Workers: workers, Requests: reqs, Nodes: nodes})
	if len(first.Placement) != len(workers) || first.Reason != "" {
		t.Fatalf("placement = %+v", first)
	}
	orig := slices.Clone(nodes)
	for range 20 {
		slices.Reverse(nodes)
		nodes[0], nodes[2] = nodes[2], nodes[0]
		got := placeJob(placeInput{Workers: workers, Requests: reqs, Nodes: nodes})
		if !maps.Equal(got.Placement, first.Placement) {
			t.Fatalf("placement with nodes %v = %v, want %v", nodes, got.Placement, first.Placement)
		}
	}
	slices.SortFunc(nodes, func(a, b nodeView) int { return cmpName(a.Name, b.Name) })
	if !slices.Equal(nodes, orig) {
		t.Errorf("placeJob changed its input nodes: %v", nodes)
	}
	perNode := map[string]int{}
	for w, n := range first.Placement {
		if roleOf(w) == jobspec.RolePserver {
			perNode[n]++
		}
	}
	for n, c := range perNode {
		if c > 1 {
			t.Errorf("%d pservers on %s while other nodes have room: %v", c, n, first.Placement)
		}
	}
}

func cmpName(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
