package scheduler

import (
	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/gtrain/gtrain/coord"
)

// clusterJobs is what the scheduler needs of the jobs read under
// coord.JobsPrefix: the jobs that have a record, in submit order. A job with
// an undecodable key of a kind the scheduler reads (record, state,
// placement, storage) is left out, with an error saying which key; the
// others are still scheduled. Keys it does not read (events, workers,
// progress...) do not matter to it, and their errors are not its.
func clusterJobs(kvs []*mvccpb.KeyValue) ([]clusterJob, []error) {
	views, errs := coord.DecodeJobs(kvs, schedulerReads...)
	jobs := make([]clusterJob, 0, len(views))
	for _, v := range views {
		if v.Record == nil || v.Broken {
			continue
		}
		j := clusterJob{name: v.Name, fence: v.RecordRev, spec: v.Record.Spec, state: v.State.State,
			results: v.Storage, checkpointRev: v.CheckpointRev, started: v.MasterSaved}
		if v.Placement != nil {
			j.placement = *v.Placement
		}
		if v.Record.Submitter != nil {
			j.owner = v.Record.Submitter.Name
		}
		jobs = append(jobs, j)
	}
	return jobs, errs
}

// schedulerReads are the kinds of a job's keys the scheduler decides by
// (JobKeyOther: the drain handover's global checkpoint and master state).
var schedulerReads = []coord.JobKeyKind{
	coord.JobKeyRecord, coord.JobKeyState, coord.JobKeyPlacement, coord.JobKeyStorage, coord.JobKeyOther,
}
