package supervisor

import (
	"slices"
	"strings"

	"github.com/gtrain/gtrain/internal/jobdir"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/metrics"
)

// noteRestarts keeps the worker's restart count for /metrics.
func (r *runner) noteRestarts(n int) {
	r.mu.Lock()
	r.restarts = n
	r.mu.Unlock()
}

// MetricsWorkers lists the workers this agent supervises, for /metrics.
func (s *Supervisor) MetricsWorkers() []metrics.Worker {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []metrics.Worker
	for job, e := range s.jobs {
		for name, r := range e.runners {
			role, _, err := jobspec.ParseWorker(name)
			if err != nil {
				continue
			}
			r.mu.Lock()
			w := metrics.Worker{Job: job, Role: role, Worker: name, AddrFile: jobdir.MetricsAddr(s.dataDir, job, name),
				Restarts: r.restarts, Running: r.pid != 0}
			r.mu.Unlock()
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b metrics.Worker) int {
		return strings.Compare(a.Job+"/"+a.Worker, b.Job+"/"+b.Worker)
	})
	return out
}
