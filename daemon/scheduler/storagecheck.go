package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord/schema"
)

// Timings of the shared-storage check of checkpoint.dir.
const (
	// checkTimeout ends a check some agent did not answer (it died, or its
	// disk hangs); a new one starts. It is longer than an agent waits for
	// the others' markers (supervisor's markerWait).
	checkTimeout = 30 * time.Second
	// checkRetry is how long a failed check stands before the next try, so
	// that a directory mounted late is noticed without a new submit.
	checkRetry = 10 * time.Second
)

// advanceCheck moves the job's storage check along and returns why the
// job waits for it ("" when every node of the placement is verified). A
// node that is to run a worker of a job with a checkpoint.dir must first
// prove, with the job's other nodes (and the markers left by nodes verified
// earlier), that the directory is the same shared storage: the agents of
// rec.Check.Nodes each write a marker and read the others'. It is pure.
func advanceCheck(rec *schema.PlacementRecord, dir string, results map[string]schema.StorageResult,
	states map[string]api.NodeState, now time.Time, newToken func() string) string {
	var nodes, unverified []string
	for _, a := range rec.Workers {
		if states[a.Node] == api.NodeDown || slices.Contains(nodes, a.Node) {
			continue
		}
		nodes = append(nodes, a.Node)
		if !rec.IsVerified(a.Node) {
			unverified = append(unverified, a.Node)
		}
	}
	slices.Sort(nodes)
	if len(unverified) == 0 {
		rec.Check = nil
		return ""
	}
	failed := ""
	if c := rec.Check; c != nil && c.Dir == dir && containsAll(c.Nodes, unverified) {
		errs, missing := tallyCheck(c, results)
		switch {
		case len(errs) == 0 && len(missing) == 0:
			rec.Verified = union(rec.Verified, c.Nodes)
			rec.Check = nil
			return ""
		case len(errs) > 0 && now.Sub(c.Started) < checkRetry:
			return notShared(dir, strings.Join(errs, "; "))
		case len(errs) > 0:
			failed = strings.Join(errs, "; ")
		case now.Sub(c.Started) < checkTimeout:
			return fmt.Sprintf("verifying that checkpoint.dir %s is storage shared by %s (waiting for %s)",
				dir, strings.Join(c.Nodes, ", "), strings.Join(missing, ", "))
		default:
			failed = fmt.Sprintf("%s did not answer within %s", strings.Join(missing, ", "), checkTimeout)
		}
	}
	var refs []string
	for _, v := range rec.Verified {
		if !slices.Contains(nodes, v) {
			refs = append(refs, v)
		}
	}
	rec.Check = &schema.StorageCheck{Token: newToken(), Dir: dir, Nodes: nodes, Refs: refs, Started: now.UTC()}
	if failed != "" {
		return notShared(dir, failed) + "; checking again"
	}
	return fmt.Sprintf("verifying that checkpoint.dir %s is storage shared by %s", dir, strings.Join(nodes, ", "))
}

func notShared(dir, why string) string {
	return fmt.Sprintf("checkpoint.dir %s is not storage every node of the job can read: %s "+
		"(mount one shared directory at this path on every node)", dir, why)
}

// tallyCheck sorts the answers to check c: the errors reported, and the
// nodes that have not answered yet.
func tallyCheck(c *schema.StorageCheck, results map[string]schema.StorageResult) (errs, missing []string) {
	for _, n := range c.Nodes {
		r, ok := results[n]
		switch {
		case !ok || r.Token != c.Token:
			missing = append(missing, n)
		case !r.OK:
			errs = append(errs, n+": "+r.Error)
		}
	}
	return errs, missing
}

func containsAll(set, want []string) bool {
	for _, w := range want {
		if !slices.Contains(set, w) {
			return false
		}
	}
	return true
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}
