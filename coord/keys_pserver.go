package coord

import "github.com/gtrain/gtrain/jobspec"

// PserverCheckpointMarkKey is pserver index's mark that its checkpoint of
// step is durable and recorded. The participant is named by the pserver's
// worker name ("pserver-3"), as the master's mark is by its own ("master").
func PserverCheckpointMarkKey(job string, step int64, index int) string {
	return CheckpointMarkKey(job, step, jobspec.PserverName(index))
}
