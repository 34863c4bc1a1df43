package scheduler

import (
	"path/filepath"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/jobspec"
)

// The bundled example is what `make demo` and the README run on one
// machine: it must fit the smallest machine we target, two cores, or the
// job waits PENDING forever.
func TestExampleJobFitsATwoCoreMachine(t *testing.T) {
	spec, err := jobspec.ParseFile(filepath.Join("..", "..", "examples", "fit_a_line.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	node := nodeView{Name: "laptop", State: api.NodeReady, Free: Request{CPU: 2, Memory: 4 << 30}}
	out := placeJob(placeInput{Workers: spec.Workers(), Requests: Requests(spec), Nodes: []nodeView{node}, OneNode: true})
	if len(out.Placement) != len(spec.Workers()) || out.Reason != "" {
		t.Fatalf("examples/fit_a_line.yaml on a 2-cpu, 4 GiB node: placed %v, reason %q; lower its resources", out.Placement, out.Reason)
	}
}
