package daemon

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gtrain/gtrain/coord"
)

// readNodes reads every node that ever registered, with its liveness and
// drain mark, at revision rev (0: now). It returns the revision read, for
// reads that must see the same moment.
func readNodes(ctx context.Context, cli *clientv3.Client, rev int64) ([]clusterNode, int64, error) {
	get := func(prefix string) (*clientv3.GetResponse, error) {
		opts := []clientv3.OpOption{clientv3.WithPrefix()}
		if rev > 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := cli.Get(ctx, prefix, opts...)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", prefix, err)
		}
		rev = resp.Header.Revision
		return resp, nil
	}
	info, err := get(coord.NodeInfoPrefix())
	if err != nil {
		return nil, 0, err
	}
	live, err := get(coord.NodePrefix())
	if err != nil {
		return nil, 0, err
	}
	drains, err := get(coord.DrainPrefix())
	if err != nil {
		return nil, 0, err
	}
	byName := map[string]*clusterNode{}
	add := func(kvs []*mvccpb.KeyValue, isLive bool) error {
		for _, kv := range kvs {
			var rec coord.NodeRecord
			if err := json.Unmarshal(kv.Value, &rec); err != nil {
				return fmt.Errorf("decode %s: %w", kv.Key, err)
			}
			n := byName[rec.Name]
			if n == nil {
				n = &clusterNode{name: rec.Name}
				byName[rec.Name] = n
			}
			n.live = n.live || isLive
			n.record = rec // the live record, read last, is the newest
		}
		return nil
	}
	if err := add(info.Kvs, false); err != nil {
		return nil, 0, err
	}
	if err := add(live.Kvs, true); err != nil {
		return nil, 0, err
	}
	for _, kv := range drains.Kvs {
		if name, ok := coord.ParseDrainKey(string(kv.Key)); ok && byName[name] != nil {
			byName[name].draining = true
			byName[name].drainRev = kv.CreateRevision
		}
	}
	nodes := make([]clusterNode, 0, len(byName))
	for _, n := range byName {
		nodes = append(nodes, *n)
	}
	slices.SortFunc(nodes, func(a, b clusterNode) int { return strings.Compare(a.name, b.name) })
	return nodes, rev, nil
}

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
