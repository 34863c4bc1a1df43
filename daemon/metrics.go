package daemon

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gtrain/gtrain/internal/jobdir"
	"github.com/gtrain/gtrain/metrics"
)

// noteRestarts keeps the worker's restart count for /metrics.
func (r *runner) noteRestarts(n int) {
	r.mu.Lock()
	r.restarts = n
	r.mu.Unlock()
}

// metricsWorkers lists the workers this agent supervises, for /metrics.
func (s *supervisor) metricsWorkers() []metrics.Worker {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []metrics.Worker
	for job, e := range s.jobs {
		for name, r := range e.runners {
			role, _, err := workerRole(name)
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

// serveMetrics serves /metrics on MetricsAddr, if set, until the agent closes.
func (a *agent) serveMetrics() error {
	if a.cfg.MetricsAddr == "" {
		return nil
	}
	lis, err := net.Listen("tcp", a.cfg.MetricsAddr)
	if err != nil {
		return fmt.Errorf("metrics (--metrics-addr) %s: %w", a.cfg.MetricsAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", metrics.NewAgentHandler(a.sup.metricsWorkers))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("metrics server stopped", "err", err)
		}
	}()
	a.closers = append(a.closers, func() { _ = srv.Close() })
	a.log.Info("serving metrics", "addr", "http://"+lis.Addr().String()+"/metrics")
	return nil
}
