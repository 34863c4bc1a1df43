package e2e

import (
	"path/filepath"
	"testing"

	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/jobspec"
)

// TestInProcessShuffleOffTrainsTheStoredOrder: fit-a-line in sync mode (2
// pservers, 2 trainers, 3 passes) with data.shuffle false trains another
// model than with the default shuffle: the setting reaches the master and
// the order matters. That two shuffled runs with one seed are bit-identical
// is TestInProcessSyncRunsAreBitIdentical (and every chaos test's reference
// run); that each pass reads another order, tasks and the records within
// them, is checked below the processes: master.TestDriverSyncShufflesRecordsWithinTasks
// and trainer.TestTaskExamplesFollowRecordOrder.
func TestInProcessShuffleOffTrainsTheStoredOrder(t *testing.T) {
	cli := startEtcd(t)
	dir := t.TempDir()
	e2erig.Housing(t, dir)
	sums := map[string]string{}
	for _, name := range []string{"shuffle-on", "shuffle-off"} {
		spec := fitALine(t, name, jobspec.ModeSync, dir, 3)
		if name == "shuffle-off" {
			off := false
			spec.Data.Shuffle = &off
		}
		submit(t, cli, spec)
		runInProcess(t, cli, dir, name, 2, 2)
		sums[name] = e2erig.ManifestSums(t, filepath.Join(dir, "jobs", name, "model"))
	}
	if sums["shuffle-off"] == sums["shuffle-on"] {
		t.Errorf("data.shuffle false trained the same model as the shuffled run: %s", sums["shuffle-on"])
	}
}
