package master

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gtrain/gtrain/coord"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// maxOpsPerTxn stays under etcd's default --max-txn-ops (128).
const maxOpsPerTxn = 120

// Committer applies ops atomically under the leader's fence (coord.Leadership).
type Committer interface {
	Commit(ctx context.Context, ops ...clientv3.Op) error
}

// EtcdStore keeps the master's state in etcd: one small key per task under
// coord.TaskPrefix and the Meta beside the job, never the whole queue in one
// value. Every write goes through the leader's fence.
type EtcdStore struct {
	cli  *clientv3.Client
	lead Committer
	job  string
}

// NewEtcdStore returns the store of job.
func NewEtcdStore(cli *clientv3.Client, lead Committer, job string) *EtcdStore {
	return &EtcdStore{cli: cli, lead: lead, job: job}
}

type taskRecord struct {
	State    string `json:"state"`
	Failures int    `json:"failures,omitempty"`
	Trainer  int    `json:"trainer"`
	Deadline int64  `json:"deadline,omitempty"` // unix nanos
	Order    int    `json:"order"`
}

var errBadTaskKey = errors.New("not a task ID")

var stateNames = map[string]TaskState{"todo": Todo, "pending": Pending, "done": Done, "failed": Failed}

// Load reads Meta and every task status.
func (s *EtcdStore) Load(ctx context.Context) (*Meta, []TaskStatus, error) {
	var meta Meta
	if _, err := coord.GetJSON(ctx, s.cli, coord.MasterMetaKey(s.job), &meta); err != nil {
		if errors.Is(err, coord.ErrNotFound) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	prefix := coord.TaskSlotPrefix(s.job, meta.Slot)
	resp, err := s.cli.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, nil, fmt.Errorf("load tasks of %s: %w", s.job, err)
	}
	out := make([]TaskStatus, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		var r taskRecord
		if err := json.Unmarshal(kv.Value, &r); err != nil {
			return nil, nil, fmt.Errorf("decode %s: %w", kv.Key, err)
		}
		id, ok := coord.ParseTaskKey(s.job, meta.Slot, string(kv.Key))
		if !ok {
			return nil, nil, fmt.Errorf("task key %s: %w", kv.Key, errBadTaskKey)
		}
		st, ok := stateNames[r.State]
		if !ok {
			return nil, nil, fmt.Errorf("task key %s: unknown state %q", kv.Key, r.State)
		}
		ts := TaskStatus{ID: id, State: st, Failures: r.Failures, Trainer: r.Trainer, Order: r.Order}
		if r.Deadline != 0 {
			ts.Deadline = unixNanoTime(r.Deadline)
		}
		out = append(out, ts)
	}
	return &meta, out, nil
}

// Save writes the changed tasks (into meta.Slot) then Meta and progress,
// fenced, in commits of at most maxOpsPerTxn operations, Meta in the last one.
// A full rewrite targets the slot not in use, so it is atomic through Meta.
func (s *EtcdStore) Save(ctx context.Context, meta Meta, changed []TaskStatus, progress *coord.ProgressRecord) error {
	ops := make([]clientv3.Op, 0, len(changed)+2)
	for _, t := range changed {
		r := taskRecord{State: t.State.String(), Failures: t.Failures, Trainer: t.Trainer, Order: t.Order}
		if !t.Deadline.IsZero() {
			r.Deadline = t.Deadline.UnixNano()
		}
		ops = append(ops, clientv3.OpPut(coord.TaskKey(s.job, meta.Slot, t.ID), coord.MustJSON(r)))
	}
	ops = append(ops, clientv3.OpPut(coord.MasterMetaKey(s.job), coord.MustJSON(meta)))
	if progress != nil {
		ops = append(ops, clientv3.OpPut(coord.ProgressKey(s.job), coord.MustJSON(progress)))
	}
	for len(ops) > 0 {
		n := min(len(ops), maxOpsPerTxn)
		if len(ops)-n > 0 && len(ops)-n < 2 {
			n-- // keep Meta and progress together in the last commit
		}
		if err := s.lead.Commit(ctx, ops[:n]...); err != nil {
			return fmt.Errorf("save master state of %s: %w", s.job, err)
		}
		ops = ops[n:]
	}
	return nil
}
