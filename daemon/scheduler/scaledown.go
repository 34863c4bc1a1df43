package scheduler

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gtrain/gtrain/coord/schema"
)

// dropScaledDown removes from workers (a placement being built) the
// workers the job's spec no longer names: trainers (or, after a re-shard,
// pservers) past the count after `gctl job scale` lowered it. Their supervisors stop them; the master
// hands their unfinished micro-batches to the others.
func dropScaledDown(j clusterJob, workers map[string]schema.Assignment) []string {
	want := j.spec.Workers()
	var gone []string
	for w := range workers {
		if !slices.Contains(want, w) {
			delete(workers, w)
			gone = append(gone, w)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	slices.Sort(gone)
	return []string{fmt.Sprintf("stopped %s: scaled down to %d trainers, %d pservers", strings.Join(gone, ", "), j.spec.Trainers, j.spec.Pservers)}
}
