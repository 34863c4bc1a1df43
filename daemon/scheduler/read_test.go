package scheduler

import (
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/gtrain/gtrain/coord"
)

// A key the scheduler does not decide by (an event, a worker record) that
// does not decode neither hides the job from it (its placed workers would
// stop counting against their nodes) nor is reported as its problem; a
// broken key it does read leaves the job out, with the key named.
func TestClusterJobsSkipOnlyWhatTheSchedulerReads(t *testing.T) {
	kv := func(key, value string, rev int64) *mvccpb.KeyValue {
		return &mvccpb.KeyValue{Key: []byte(key), Value: []byte(value), CreateRevision: rev, ModRevision: rev}
	}
	jobs, errs := clusterJobs([]*mvccpb.KeyValue{
		kv(coord.JobKey("a"), `{"spec":{"name":"a"}}`, 2),
		kv(coord.PlacementKey("a"), `{"gen":1,"workers":{"master":{"node":"n1","gen":1}}}`, 3),
		kv(coord.WorkerKey("a", "master"), `not json`, 4),
		kv(coord.JobKey("b"), `{"spec":{"name":"b"}}`, 5),
		kv(coord.PlacementKey("b"), `not json`, 6),
	})
	if len(jobs) != 1 || jobs[0].name != "a" || jobs[0].placement.Workers["master"].Node != "n1" {
		t.Errorf("jobs %+v, want a with its placement (b's placement is broken)", jobs)
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), coord.PlacementKey("b")) {
		t.Errorf("errors %v, want one naming %s", errs, coord.PlacementKey("b"))
	}
}
