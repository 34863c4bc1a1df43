package scheduler

import (
	"fmt"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
)

// GPUs: placement counts them like CPUs (Request.GPUs against the node's
// --gpus), and then hands each worker placed anew specific devices of its
// node that no other placed worker holds (Assignment.GPUs); its agent pins
// them with CUDA_VISIBLE_DEVICES. A worker keeps its devices while it stays
// on its node; one that moves (its node died or drains) gets fresh ones
// on its new node. Devices are freed when the worker leaves the placement
// or its job ends: the pool is rebuilt from the placements on every pass.

// gpuPool is each node's GPU count and the devices the placed workers of
// the jobs that have not ended hold there.
type gpuPool struct {
	capacity map[string]int
	held     map[string]map[int]bool
}

// newGPUPool reads the devices held from the placements of jobs.
func newGPUPool(nodes []coord.ClusterNode, jobs []clusterJob) gpuPool {
	p := gpuPool{capacity: map[string]int{}, held: map[string]map[int]bool{}}
	for _, n := range nodes {
		p.capacity[n.Name] = n.Record.Capacity.GPUs
	}
	for _, j := range jobs {
		if api.Terminal(j.state) {
			continue
		}
		for _, a := range j.placement.Workers {
			p.hold(a.Node, a.GPUs)
		}
	}
	return p
}

func (p gpuPool) hold(node string, devices []int) {
	if len(devices) == 0 {
		return
	}
	if p.held[node] == nil {
		p.held[node] = map[int]bool{}
	}
	for _, d := range devices {
		p.held[node][d] = true
	}
}

// free counts the devices of node that nobody holds.
func (p gpuPool) free(node string) int {
	n := 0
	for d := range p.capacity[node] {
		if !p.held[node][d] {
			n++
		}
	}
	return n
}

// take holds and returns the n lowest free devices of node; nil when n is
// 0 or fewer are free (placement checked free first, so that does not
// happen).
func (p gpuPool) take(node string, n int) []int {
	if n <= 0 || p.free(node) < n {
		return nil
	}
	var out []int
	for d := 0; len(out) < n; d++ {
		if !p.held[node][d] {
			out = append(out, d)
		}
	}
	p.hold(node, out)
	return out
}

// assignGPUs gives every worker of next that the pass placed anew (absent
// from prev, or of a newer generation: it moved) the devices its request
// asks, in spec order so that the choice is a function of the input.
func assignGPUs(next *schema.PlacementRecord, prev schema.PlacementRecord, workers []string, requests map[string]Request, pool gpuPool) {
	for _, w := range workers {
		a, ok := next.Workers[w]
		if old, had := prev.Workers[w]; !ok || (had && old.Gen == a.Gen) {
			continue
		}
		a.GPUs = pool.take(a.Node, requests[w].GPUs)
		next.Workers[w] = a
	}
}

// noFreeGPU opens a PENDING reason when GPUs are what keeps who (a worker,
// or the whole job) off every ready node: none has req.GPUs free. "" when
// req asks none or some node has them (something else is short).
func noFreeGPU(who string, req Request, nodes []nodeView) string {
	if req.GPUs == 0 {
		return ""
	}
	for _, n := range nodes {
		if n.State == api.NodeReady && req.GPUs <= n.Free.GPUs {
			return ""
		}
	}
	return fmt.Sprintf("no free GPU for %s: it asks %d on one node and no ready node has that many free; ", who, req.GPUs)
}
