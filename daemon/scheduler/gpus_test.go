package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
)

func gpuNode(name string, cpu float64, gpus int) nodeView {
	n := ready(name, cpu, 8*gi)
	n.Free.GPUs = gpus
	return n
}

// GPUs count like CPUs in placement; when they are what is short, the
// reason opens with "no free GPU" (the free amounts it lists are those
// before the job's own workers took theirs).
func TestPlaceJobGPUs(t *testing.T) {
	small, ps := Request{CPU: 0.1}, Request{CPU: 0.5}
	w3, r3 := testWorkers(1, 3, small, ps, Request{CPU: 0.5, GPUs: 1})
	w2, r2 := testWorkers(1, 2, small, ps, Request{CPU: 0.5, GPUs: 2})
	runPlaceCases(t, []placeCase{
		{"trainers go where GPUs are free",
			placeInput{Workers: w3, Requests: r3, Nodes: []nodeView{gpuNode("n1", 8, 0), gpuNode("n2", 4, 2), gpuNode("n3", 4, 1)}},
			map[string]string{"master": "n1", "pserver-0": "n2", "trainer-0": "n3", "trainer-1": "n2", "trainer-2": "n2"}, ""},
		{"one GPU short: nothing placed, no free GPU named",
			placeInput{Workers: w3, Requests: r3, Nodes: []nodeView{gpuNode("n1", 8, 1), gpuNode("n2", 8, 1)}},
			map[string]string{},
			"no free GPU for trainer-2: it asks 1 on one node and no ready node has that many free; " +
				"needs 0.5 cpu, 1 gpu for trainer (0.5 cpu, 1 gpu each); free: n1 8 cpu, 1 gpu, n2 8 cpu, 1 gpu"},
		{"two GPUs each must be on one node",
			placeInput{Workers: w2, Requests: r2, Nodes: []nodeView{gpuNode("n1", 8, 1), gpuNode("n2", 8, 3)}},
			map[string]string{},
			"no free GPU for trainer-1: it asks 2 on one node and no ready node has that many free; " +
				"needs 0.5 cpu, 2 gpu for trainer (0.5 cpu, 2 gpu each); free: n1 8 cpu, 1 gpu, n2 8 cpu, 3 gpu"},
	})
	// CPU short while GPUs are free: the reason does not blame the GPUs.
	out := placeJob(placeInput{Workers: w3, Requests: r3, Nodes: []nodeView{gpuNode("n1", 1, 4)}})
	if len(out.Placement) != 0 || strings.Contains(out.Reason, "no free GPU") || !strings.Contains(out.Reason, "free: n1 1 cpu, 4 gpu") {
		t.Errorf("cpu short: %v %q; want nothing placed, cpu named, GPUs not blamed", out.Placement, out.Reason)
	}
	one := placeJob(placeInput{Workers: w3, Requests: r3, OneNode: true, Nodes: []nodeView{gpuNode("n1", 8, 2), gpuNode("n2", 8, 2)}})
	if len(one.Placement) != 0 || !strings.HasPrefix(one.Reason, "no free GPU for the whole job: it asks 3 on one node") {
		t.Errorf("one-node job of 3 GPUs on nodes of 2: %v %q", one.Placement, one.Reason)
	}
}

// The pool hands out the lowest devices nobody holds, below the node's
// count, and never more than are free.
func TestGPUPoolTake(t *testing.T) {
	p := gpuPool{capacity: map[string]int{"n1": 4, "n2": 1}, held: map[string]map[int]bool{}}
	p.hold("n1", []int{1})
	for _, tc := range []struct {
		node string
		n    int
		want []int
	}{
		{"n1", 2, []int{0, 2}},
		{"n1", 2, nil}, // only 3 is left
		{"n1", 1, []int{3}},
		{"n1", 0, nil},
		{"n2", 1, []int{0}},
		{"n3", 1, nil}, // no such node: no GPUs
	} {
		if got := p.take(tc.node, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("take(%s, %d) = %v, want %v", tc.node, tc.n, got, tc.want)
		}
	}
}

func gpuClusterNode(name string, gpus int) coord.ClusterNode {
	n := liveNode(name, 8)
	n.Record.Capacity.GPUs = gpus
	return n
}

// pairs lists a placement's (node, device) pairs, failing on a worker
// that holds other than want devices.
func pairs(t *testing.T, p schema.PlacementRecord, want map[string]int) []string {
	t.Helper()
	var out []string
	for w, a := range p.Workers {
		if len(a.GPUs) != want[roleOf(w)] {
			t.Errorf("%s holds devices %v, want %d", w, a.GPUs, want[roleOf(w)])
		}
		for _, d := range a.GPUs {
			out = append(out, fmt.Sprintf("%s/%d", a.Node, d))
		}
	}
	slices.Sort(out)
	return out
}

// schedule gives every GPU worker its own devices; a second job waits for
// them with "no free GPU"; a worker off a dead node gets a free device of
// its new node while the others keep theirs; a job's end frees its devices.
func TestScheduleAssignsDevices(t *testing.T) {
	spec := planSpec("gpu", 3, "/shared")
	spec.Resources.Trainer.GPU = 1
	more := planSpec("more", 2, "/shared")
	more.Resources.Trainer.GPU = 1
	view := clusterView{
		nodes: []coord.ClusterNode{gpuClusterNode("n1", 2), gpuClusterNode("n2", 2)},
		jobs: []clusterJob{{name: "gpu", fence: 5, spec: spec, state: api.StateRunning},
			{name: "more", fence: 6, spec: more, state: api.StatePending}},
	}
	updates := schedule(view, noneDown, schedNow, tokens())
	placed, waiting := updateOf(t, updates, "gpu").record, updateOf(t, updates, "more").record
	got := pairs(t, placed, map[string]int{"trainer": 1})
	if want := []string{"n1/0", "n1/1", "n2/0"}; !slices.Equal(got, want) {
		t.Fatalf("devices %v, want %v (trainers: %+v)", got, want, placed.Workers)
	}
	if len(waiting.Workers) != 0 || !strings.Contains(waiting.Reason, "no free GPU for trainer-1") {
		t.Errorf("second job: %+v; want nothing placed and no free GPU", waiting)
	}
	placed.Verified, placed.Check, placed.Reason = []string{"n1", "n2"}, nil, ""
	view.jobs[0].placement, view.jobs[1].placement = placed, waiting

	// n1 (two trainers) dies: one moves onto n2's free device, one waits.
	view.nodes[0].Live = false
	next := updateOf(t, schedule(view, noneDown, schedNow, tokens()), "gpu").record
	for w, a := range next.Workers {
		if a.Node == "n1" {
			t.Errorf("%s still on the dead n1", w)
		}
		if prev := placed.Workers[w]; prev.Node == "n2" && !slices.Equal(a.GPUs, prev.GPUs) {
			t.Errorf("%s stayed on n2 but its devices changed %v -> %v", w, prev.GPUs, a.GPUs)
		}
	}
	if got := pairs(t, next, map[string]int{"trainer": 1}); !slices.Equal(got, []string{"n2/0", "n2/1"}) {
		t.Errorf("after n1 died: devices %v, want n2/0 and n2/1", got)
	}
	if !strings.Contains(next.Reason, "no free GPU for trainer-") {
		t.Errorf("the trainer left out waits with %q; want no free GPU", next.Reason)
	}

	// The first job ends: the second takes the devices it held.
	view.nodes[0].Live = true
	view.jobs[0].state = api.StateSucceeded
	after := updateOf(t, schedule(view, noneDown, schedNow, tokens()), "more").record
	if got := pairs(t, after, map[string]int{"trainer": 1}); len(got) != 2 || got[0] == got[1] {
		t.Errorf("after the first job ended: devices %v, want two distinct", got)
	}
}
