package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/wait"
	"github.com/gtrain/gtrain/jobspec"
)

// cluster is a running gtrain cluster as a test drives it: through gctl,
// against one of its agents, as an operator would. Both rigs implement
// it: the agents on this host (agent: one, or several on one etcd) and
// the hosts in network namespaces (hostCluster, through the agent of its
// host i: hc.on(i)). Starting a job, waiting on its status and reading it
// are written once, here, for both.
type cluster interface {
	// gctl runs gctl ARGS against the agent; it returns stdout, stderr
	// and the exit code.
	gctl(t *testing.T, args ...string) (string, string, int)
	// writeSpec writes the job's spec where every agent reads it and
	// returns its path.
	writeSpec(t *testing.T, s jobspec.Spec) string
}

// jsonOf runs gctl ARGS -o json and decodes its output into v.
func jsonOf(t *testing.T, c cluster, v any, args ...string) {
	t.Helper()
	out, errs, code := c.gctl(t, append(args, "-o", "json")...)
	if code != 0 {
		t.Fatalf("gctl %v: exit %d: %s", args, code, errs)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("gctl %v: bad JSON: %v\n%s", args, err, out)
	}
}

// startDetached submits the job without monitoring it.
func startDetached(t *testing.T, c cluster, s jobspec.Spec) {
	t.Helper()
	if _, errs, code := c.gctl(t, "job", "start", "-f", c.writeSpec(t, s), "--detach"); code != 0 {
		t.Fatalf("job start %s: exit %d: %s", s.Name, code, errs)
	}
}

// jobStatus is the job's status, as `gctl job status` shows it.
func jobStatus(t *testing.T, c cluster, job string) api.JobStatus {
	t.Helper()
	var st api.JobStatus
	jsonOf(t, c, &st, "job", "status", job)
	return st
}

// waitJob polls the job's status until cond holds; a job that fails
// meanwhile fails the test at once, with its reason and events.
func waitJob(t *testing.T, c cluster, job, what string, timeout time.Duration, cond func(api.JobStatus) bool) api.JobStatus {
	t.Helper()
	var st api.JobStatus
	wait.Eventually(t, timeout, what, func() (bool, string) {
		out, _, code := c.gctl(t, "job", "status", job, "-o", "json")
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

// waitStill polls the job's status until its step has stood still for
// still and returns that status: the wait for a job held by a fault, in
// place of a sleep. still must pass the status record's save period
// (250 ms), so that a standing step is the job's and not the record's.
func waitStill(t *testing.T, c cluster, job, what string, still, timeout time.Duration) api.JobStatus {
	t.Helper()
	var st api.JobStatus
	step, since := int64(-1), time.Now()
	wait.Eventually(t, timeout, what, func() (bool, string) {
		st = jobStatus(t, c, job)
		if st.Step != step {
			step, since = st.Step, time.Now()
		}
		return time.Since(since) >= still, fmt.Sprintf("step %d at %s", st.Step, time.Now().Format("15:04:05.000"))
	})
	return st
}

// The agents on this host share the test's file system: a spec goes into
// the directory above their data directory, the test's work directory.
func (a *agent) writeSpec(t *testing.T, s jobspec.Spec) string {
	t.Helper()
	return writeSpec(t, filepath.Dir(a.dataDir), s)
}

// hostAgent is hc as seen through the agent of its host i.
type hostAgent struct {
	hc *hostCluster
	i  int
}

func (hc *hostCluster) on(i int) hostAgent { return hostAgent{hc, i} }

func (h hostAgent) gctl(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return h.hc.gctl(t, h.i, args...)
}

func (h hostAgent) writeSpec(t *testing.T, s jobspec.Spec) string {
	t.Helper()
	return h.hc.writeSpec(t, s)
}
