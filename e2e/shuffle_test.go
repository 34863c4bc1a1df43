package e2e

import (
	"path/filepath"
	"testing"
)

// TestInProcessShuffleIsSeeded: fit-a-line in sync mode (2 pservers, 2
// trainers, 3 passes) with data.shuffle on, run twice with one seed, gives
// bit-identical models — the record order is a function of the seed alone —
// and with data.shuffle false a different model (the order matters, so it
// did change). That each pass reads another order, tasks and records within
// them, is checked below the processes: master.TestDriverSyncShufflesRecordsWithinTasks
// and trainer.TestTaskExamplesFollowRecordOrder.
func TestInProcessShuffleIsSeeded(t *testing.T) {
	cli := startEtcd(t)
	dir := t.TempDir()
	housing(t, dir)
	sums := map[string]string{}
	for _, name := range []string{"shuffle-a", "shuffle-b", "shuffle-off"} {
		spec := fitALine(name, "sync", dir, 3)
		if name == "shuffle-off" {
			off := false
			spec.Data.Shuffle = &off
		}
		submit(t, cli, spec)
		runInProcess(t, cli, dir, name, 2, 2)
		sums[name] = manifestSums(t, filepath.Join(dir, "jobs", name, "model"))
	}
	if sums["shuffle-a"] != sums["shuffle-b"] {
		t.Errorf("two runs with one seed differ:\n %s\n %s", sums["shuffle-a"], sums["shuffle-b"])
	}
	if sums["shuffle-off"] == sums["shuffle-a"] {
		t.Errorf("data.shuffle false trained the same model as the shuffled run: %s", sums["shuffle-a"])
	}
}
