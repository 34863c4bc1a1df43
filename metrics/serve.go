package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gtrain/gtrain/internal/atomicfile"
	"github.com/gtrain/gtrain/internal/fileperm"
)

// ServeRole serves reg's metrics at http://127.0.0.1:PORT/metrics (a port
// the kernel picks) and writes "127.0.0.1:PORT" into addrFile for the
// agent, until ctx ends; it removes the file then. The Go runtime and
// process collectors are added to reg.
func ServeRole(ctx context.Context, reg *prometheus.Registry, addrFile string, log *slog.Logger) error {
	reg.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("metrics: listen: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(addrFile), fileperm.Dir); err != nil {
		lis.Close()
		return fmt.Errorf("metrics: %w", err)
	}
	if err := atomicfile.WriteFile(addrFile, []byte(lis.Addr().String()), fileperm.File); err != nil {
		lis.Close()
		return fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) && log != nil {
			log.Warn("metrics server stopped", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		_ = os.Remove(addrFile)
		_ = srv.Close()
	}()
	return nil
}
