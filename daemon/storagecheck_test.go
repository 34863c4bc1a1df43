package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
)

// A job whose checkpoint.dir cannot be used stays PENDING, says why, and
// starts no worker.
func TestUnusableCheckpointDirKeepsTheJobPending(t *testing.T) {
	t.Parallel()
	endpoint := startEtcd(t)
	cli := etcdClient(t, endpoint)
	a := startAgent(t, testConfig(t, "n1", endpoint))
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	const job = "sleep-nodir"
	submitSpec(t, a, job, 1, 1, withCheckpointDir(filepath.Join(file, "ckpt")))
	var st api.JobStatus
	eventually(t, 15*time.Second, func() (bool, string) {
		st = jobStatusOf(t, a.client, job)
		return strings.Contains(st.Reason, "is not storage every node of the job can read: n1: cannot create"),
			fmt.Sprintf("state %s reason %q", st.State, st.Reason)
	})
	if st.State != api.StatePending {
		t.Errorf("state %s, want PENDING", st.State)
	}
	if recs := workers(t, cli, job); len(recs) != 0 {
		t.Errorf("workers started on an unverified node: %+v", recs)
	}
}
