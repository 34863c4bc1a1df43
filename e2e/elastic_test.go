package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// elasticYAML is fit-a-line in sync mode with a global batch of 3
// micro-batches of 20 records, whatever the trainer count.
func elasticYAML(name string, trainers int) string {
	return fmt.Sprintf(`name: %s
mode: sync
trainers: %d
pservers: 2
passes: 3
batch_size: 20
global_batch: 60
seed: 1
model: {kind: linear, inputs: 13, outputs: 1}
optimizer: {kind: sgd, learning_rate: 0.01}
data: {train: data/housing-train-*, test: data/housing-test-*}
checkpoint: {every: "10", keep: 2}
`, name, trainers)
}

// TestElasticSameModelAnyTrainerCount: the same sync job with 1 and with 3
// trainers (same global batch) ends with the same model, bit for bit, and
// applies every record once per pass.
func TestElasticSameModelAnyTrainerCount(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes")
	}
	begin := time.Now()
	work := t.TempDir()
	housing(t, filepath.Join(work, "data"))
	a := startAgent(t, filepath.Join(work, "agent"))
	sums := map[int]string{}
	var samples []int64
	for _, n := range []int{1, 3} {
		name := fmt.Sprintf("elastic-%d", n)
		if _, errs, code := a.gctl(t, "job", "start", "-f", writeSpec(t, work, elasticYAML(name, n))); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errs)
		}
		st := a.status(t, name)
		if len(st.Trainers) != n {
			t.Fatalf("%s ran %d trainers, want %d", name, len(st.Trainers), n)
		}
		if samples == nil {
			samples = st.SamplesApplied
		}
		if len(st.SamplesApplied) != 3 || !slices.Equal(st.SamplesApplied, samples) || samples[0] != samples[2] {
			t.Fatalf("%s: samples applied %v, want 3 equal passes as %v", name, st.SamplesApplied, samples)
		}
		sums[n] = manifestSums(t, st.ModelDir)
	}
	if sums[1] != sums[3] {
		t.Fatalf("the model depends on the trainer count:\n1 trainer:  %s\n3 trainers: %s", sums[1], sums[3])
	}
	t.Logf("took %s", time.Since(begin).Round(time.Millisecond))
}
