package main

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gtrain/gtrain/metrics"
)

// roleMetrics is the registry a role records into, served for the agent
// (see package metrics) when file is set; nil (no metrics) otherwise.
func roleMetrics(ctx context.Context, file string, log *slog.Logger) (prometheus.Registerer, error) {
	if file == "" {
		return nil, nil
	}
	reg := prometheus.NewRegistry()
	if err := metrics.ServeRole(ctx, reg, file, log); err != nil {
		return nil, err
	}
	return reg, nil
}
