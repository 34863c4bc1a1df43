package daemon

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/gtrain/gtrain/metrics"
)

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
	mux.Handle("/metrics", metrics.NewAgentHandler(a.sup.MetricsWorkers))
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
