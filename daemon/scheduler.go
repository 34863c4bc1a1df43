package daemon

import (
	"fmt"
	"slices"
)

// placeWorkers assigns workers (in spec.Workers() order, master first) to
// nodes round-robin over the node names in sorted order, so that the same
// cluster always yields the same placement and a single node gets
// everything. It returns worker -> node.
func placeWorkers(workers, nodes []string) (map[string]string, error) {
	if len(nodes) == 0 {
		return nil, fmt.Errorf("place %d workers: %w", len(workers), ErrNoNodes)
	}
	sorted := slices.Clone(nodes)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	placement := make(map[string]string, len(workers))
	for i, w := range workers {
		placement[w] = sorted[i%len(sorted)]
	}
	return placement, nil
}
