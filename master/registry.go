package master

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/jobspec"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrTrainersFull is returned when every trainer ID is held by a live trainer.
var ErrTrainersFull = errors.New("every trainer ID is taken")

// TrainerRegistry hands out dense trainer IDs 0..N-1. Each ID is a key under
// the trainer's own lease, so it frees itself when the trainer dies; a worker
// that comes back gets its old ID again.
type TrainerRegistry struct {
	cli  *clientv3.Client
	lead Committer
	job  string
	n    int
	mu   sync.Mutex
}

// NewTrainerRegistry returns the registry of job with n trainer IDs.
func NewTrainerRegistry(cli *clientv3.Client, lead Committer, job string, n int) *TrainerRegistry {
	return &TrainerRegistry{cli: cli, lead: lead, job: job, n: n}
}

// Register binds worker to an ID under lease.
func (r *TrainerRegistry) Register(ctx context.Context, worker string, lease int64) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	resp, err := r.cli.Get(ctx, coord.TrainerPrefix(r.job), clientv3.WithPrefix())
	if err != nil {
		return 0, fmt.Errorf("register %s: %w", worker, err)
	}
	held := map[int]string{}
	for _, kv := range resp.Kvs {
		var rec schema.TrainerRecord
		if json.Unmarshal(kv.Value, &rec) == nil {
			held[rec.ID] = rec.Worker
		}
	}
	id := -1
	for i, w := range held {
		if w == worker {
			id = i
		}
	}
	if id < 0 {
		// Prefer the ID the worker's name suggests, so trainer-1 is usually ID 1.
		if role, n, err := jobspec.ParseWorker(worker); err == nil && role == jobspec.RoleTrainer && n < r.n && held[n] == "" {
			id = n
		}
	}
	for i := 0; id < 0 && i < r.n; i++ {
		if held[i] == "" {
			id = i
		}
	}
	if id < 0 {
		return 0, fmt.Errorf("register %s: %d trainers already registered: %w", worker, r.n, ErrTrainersFull)
	}
	rec := schema.TrainerRecord{ID: id, Worker: worker}
	op := clientv3.OpPut(coord.TrainerKey(r.job, id), coord.MustJSON(rec), clientv3.WithLease(clientv3.LeaseID(lease)))
	if err := r.lead.Commit(ctx, op); err != nil {
		return 0, fmt.Errorf("register %s: %w", worker, err)
	}
	return id, nil
}
