package bench

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/jobdir"
	"github.com/gtrain/gtrain/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// TestComputeSecondsSumsTheTrainers: the bench reads each trainer's
// gtrain_trainer_compute_seconds from the address it serves its metrics at,
// as the agent lays them out, and sums them; without a trainer serving, it
// says so.
func TestComputeSecondsSumsTheTrainers(t *testing.T) {
	work := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := computeSeconds("fit", work); err == nil || !strings.Contains(err.Error(), "serves metrics") {
		t.Fatalf("no trainer serving: err %v, want one saying none serves metrics", err)
	}
	for i, d := range [][]time.Duration{{30 * time.Millisecond, 10 * time.Millisecond}, {20 * time.Millisecond}} {
		reg := prometheus.NewRegistry()
		tr := metrics.NewTrainer(reg)
		for _, x := range d {
			tr.Computed(x)
		}
		worker := []string{"trainer-0", "trainer-1"}[i]
		if err := metrics.ServeRole(ctx, reg, jobdir.MetricsAddr(filepath.Join(work, "agent"), "fit", worker), nil); err != nil {
			t.Fatal(err)
		}
	}
	got, err := computeSeconds("fit", work)
	if err != nil {
		t.Fatal(err)
	}
	if got.count != 3 || math.Abs(got.sum-0.06) > 1e-9 {
		t.Fatalf("computeSeconds = %+v, want 3 micro-batches of 0.06 s in all", got)
	}
}
