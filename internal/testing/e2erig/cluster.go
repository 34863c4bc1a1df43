package e2erig

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/wait"
	"github.com/gtrain/gtrain/jobspec"
)

// Cluster is a running gtrain cluster as a test drives it: through gctl,
// against one of its agents, as an operator would. Both rigs implement
// it: the agents on this host (Agent: one, or several on one etcd) and
// the hosts in network namespaces (HostCluster, through the agent of its
// host i: hc.On(i)). Starting a job, waiting on its status and reading it
// are written once, here, for both.
type Cluster interface {
	// Gctl runs gctl ARGS against the agent; it returns stdout, stderr
	// and the exit code.
	Gctl(t *testing.T, args ...string) (string, string, int)
	// WriteSpec writes the job's spec where every agent reads it and
	// returns its path.
	WriteSpec(t *testing.T, s jobspec.Spec) string
}

// JSONOf runs gctl ARGS -o json and decodes its output into v.
func JSONOf(t *testing.T, c Cluster, v any, args ...string) {
	t.Helper()
	out, errs, code := c.Gctl(t, append(args, "-o", "json")...)
	if code != 0 {
		t.Fatalf("gctl %v: exit %d: %s", args, code, errs)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("gctl %v: bad JSON: %v\n%s", args, err, out)
	}
}

// StartDetached submits the job without monitoring it.
func StartDetached(t *testing.T, c Cluster, s jobspec.Spec) {
	t.Helper()
	if _, errs, code := c.Gctl(t, "job", "start", "-f", c.WriteSpec(t, s), "--detach"); code != 0 {
		t.Fatalf("job start %s: exit %d: %s", s.Name, code, errs)
	}
}

// JobStatus is the job's status, as `gctl job status` shows it.
func JobStatus(t *testing.T, c Cluster, job string) api.JobStatus {
	t.Helper()
	var st api.JobStatus
	JSONOf(t, c, &st, "job", "status", job)
	return st
}

// WaitJob polls the job's status until cond holds; a job that fails
// meanwhile fails the test at once, with its reason and events.
func WaitJob(t *testing.T, c Cluster, job, what string, timeout time.Duration, cond func(api.JobStatus) bool) api.JobStatus {
	t.Helper()
	var st api.JobStatus
	wait.Eventually(t, timeout, what, func() (bool, string) {
		out, _, code := c.Gctl(t, "job", "status", job, "-o", "json")
		st = api.JobStatus{}
		if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
			return false, fmt.Sprintf("gctl job status %s: exit %d: %s", job, code, out)
		}
		if cond(st) {
			return true, ""
		}
		if api.Terminal(st.State) && st.State != api.StateSucceeded {
			t.Fatalf("waiting for %s: job %s ended %s: %s\nevents: %+v", what, job, st.State, st.Reason, st.Events)
		}
		return false, fmt.Sprintf("%+v", st)
	})
	return st
}

// HostAgent is hc as seen through the agent of its host i.
type HostAgent struct {
	hc *HostCluster
	i  int
}

// On is hc as seen through the agent of host i.
func (hc *HostCluster) On(i int) HostAgent { return HostAgent{hc, i} }

// Gctl runs gctl ARGS against host i's agent.
func (h HostAgent) Gctl(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return h.hc.GctlOn(t, h.i, args...)
}

// WriteSpec writes s where every host reads it.
func (h HostAgent) WriteSpec(t *testing.T, s jobspec.Spec) string {
	t.Helper()
	return h.hc.WriteSpec(t, s)
}

// ProgressedFrom holds once the job reached step (or ended well).
func ProgressedFrom(step int64) func(api.JobStatus) bool {
	return func(st api.JobStatus) bool { return st.Step >= step || st.State == api.StateSucceeded }
}

// Succeeded is a wait's condition: the job SUCCEEDED.
func Succeeded(st api.JobStatus) bool { return st.State == api.StateSucceeded }
