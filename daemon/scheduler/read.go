package scheduler

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/gtrain/gtrain/coord"
)

// clusterJobs groups the key-values read under coord.JobsPrefix into the
// jobs that have a record, in submit order. A job with an undecodable key is
// left out, with an error saying which key; the others are still scheduled.
func clusterJobs(kvs []*mvccpb.KeyValue) ([]clusterJob, []error) {
	byJob := map[string]*clusterJob{}
	var errs []error
	for _, kv := range kvs {
		key, ok := coord.ParseJobKey(string(kv.Key))
		if !ok {
			continue
		}
		j := byJob[key.Job]
		if j == nil {
			j = &clusterJob{name: key.Job, results: map[string]coord.StorageResult{}}
			byJob[key.Job] = j
		}
		if err := j.add(key, kv); err != nil {
			errs = append(errs, fmt.Errorf("job %s left unscheduled: decode %s: %w", key.Job, kv.Key, err))
			j.broken = true
		}
	}
	jobs := make([]clusterJob, 0, len(byJob))
	for _, j := range byJob {
		if j.fence > 0 && !j.broken {
			jobs = append(jobs, *j)
		}
	}
	slices.SortFunc(jobs, func(a, b clusterJob) int { return cmp.Compare(a.fence, b.fence) })
	return jobs, errs
}

func (j *clusterJob) add(key coord.JobKeyParts, kv *mvccpb.KeyValue) error {
	switch key.Kind {
	case coord.JobKeyRecord:
		var rec coord.JobRecord
		if err := json.Unmarshal(kv.Value, &rec); err != nil {
			return err
		}
		j.spec, j.fence = rec.Spec, kv.CreateRevision
	case coord.JobKeyState:
		st, err := coord.DecodeState(kv.Value)
		if err != nil {
			return err
		}
		j.state = st.State
	case coord.JobKeyPlacement:
		return json.Unmarshal(kv.Value, &j.placement)
	case coord.JobKeyStorage:
		var r coord.StorageResult
		if err := json.Unmarshal(kv.Value, &r); err != nil {
			return err
		}
		j.results[key.Name] = r
	case coord.JobKeyOther:
		switch _, kind := coord.ParseHandoverKey(string(kv.Key)); kind {
		case coord.HandoverCheckpoint:
			j.checkpointRev = kv.ModRevision
		case coord.HandoverMaster:
			j.started = true
		}
	}
	return nil
}
