package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/internal/testing/wait"
)

// waitStill polls the job's status until its step has stood still for
// still and returns that status: the wait for a job held by a fault, in
// place of a sleep. still must pass the status record's save period
// (250 ms), so that a standing step is the job's and not the record's.
func waitStill(t *testing.T, c e2erig.Cluster, job, what string, still, timeout time.Duration) api.JobStatus {
	t.Helper()
	var st api.JobStatus
	step, since := int64(-1), time.Now()
	wait.Eventually(t, timeout, what, func() (bool, string) {
		st = e2erig.JobStatus(t, c, job)
		if st.Step != step {
			step, since = st.Step, time.Now()
		}
		return time.Since(since) >= still, fmt.Sprintf("step %d at %s", st.Step, time.Now().Format("15:04:05.000"))
	})
	return st
}
