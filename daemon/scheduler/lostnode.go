package scheduler

import (
	"fmt"
	"strings"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord/schema"
)

// lostNodeEvents says, once per down node, which of the job's roles it
// took with it ("node n2 lost: pserver-1, trainer-0"), before the events
// of where they go. Once means: in the update that moves them off the node
// (or finds no room for them), or, for a job that must wait for that node
// (no checkpoint.dir), in the update whose reason starts saying so. Later
// passes over the same placement say nothing again.
func lostNodeEvents(spec []string, prev, next schema.PlacementRecord, states map[string]api.NodeState) []string {
	lost := map[string][]string{}
	var order []string
	for _, w := range spec {
		a, ok := prev.Workers[w]
		if !ok || states[a.Node] != api.NodeDown {
			continue
		}
		if lost[a.Node] == nil {
			order = append(order, a.Node)
		}
		lost[a.Node] = append(lost[a.Node], w)
	}
	var events []string
	for _, node := range order {
		if leftNode(lost[node], node, next) || newlyWaitsFor(node, prev, next) {
			events = append(events, fmt.Sprintf("node %s lost: %s", node, strings.Join(lost[node], ", ")))
		}
	}
	return events
}

// leftNode reports whether any of workers is no longer placed on node.
func leftNode(workers []string, node string, next schema.PlacementRecord) bool {
	for _, w := range workers {
		if a, ok := next.Workers[w]; !ok || a.Node != node {
			return true
		}
	}
	return false
}

// newlyWaitsFor reports whether next's reason, and not prev's, says the
// job waits for the down node (keepOnItsNode's reason).
func newlyWaitsFor(node string, prev, next schema.PlacementRecord) bool {
	waits := fmt.Sprintf("waiting for node %s (down)", node)
	return strings.Contains(next.Reason, waits) && !strings.Contains(prev.Reason, waits)
}
