package master

import (
	"context"
	"fmt"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/internal/confine"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/master/core"
	"github.com/gtrain/gtrain/pserver/client"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// jobData is what the master reads before it campaigns: the job's spec, the
// layout of its parameters, its training tasks and its test set.
type jobData struct {
	// rev is the create revision of the job's record: with the name, the
	// job's identity that its checkpoint files carry.
	rev    int64
	spec   *jobspec.Spec
	layout *client.Layout
	tasks  *core.TaskSet
	test   []dataset.Example // nil: no test set
	// roots are where the master opens the job's paths (Common.Roots).
	roots confine.Roots
}

// loadJob reads the job's record (refusing one of another revision than
// wantRev, unless 0) and cuts its training data into tasks.
// The shards are listed and opened beneath the job's roots: a shard
// symlinked out of them since submit is an error naming it.
func loadJob(ctx context.Context, cli *clientv3.Client, cfg Config) (*jobData, error) {
	rec, rev, err := coord.GetJobRecord(ctx, cli, cfg.Job)
	if err != nil {
		return nil, fmt.Errorf("master: read job: %w", err)
	}
	if err := coord.CheckJobRev(cfg.Job, cfg.JobRev, rev); err != nil {
		return nil, fmt.Errorf("master: %w", err)
	}
	spec := &rec.Spec
	roots, err := cfg.Roots(cfg.DataDir, spec)
	if err != nil {
		return nil, fmt.Errorf("master: the job's roots: %w", err)
	}
	layout, err := client.NewLayout(spec)
	if err != nil {
		return nil, err
	}
	files, err := dataset.GlobIn(roots.Matches, spec.Data.Train)
	if err != nil {
		return nil, fmt.Errorf("master: data.train: %w", err)
	}
	tasks, err := core.CutTasks(roots.Open, files, spec.Data.ChunksPerTask)
	if err != nil {
		return nil, fmt.Errorf("master: %w", err)
	}
	test, err := readTestSet(roots, spec.Data.Test)
	if err != nil {
		return nil, err
	}
	return &jobData{rev: rev, spec: spec, layout: layout, tasks: tasks, test: test, roots: roots}, nil
}

// readTestSet reads every example of the test shards (pattern "": none).
func readTestSet(roots confine.Roots, pattern string) ([]dataset.Example, error) {
	if pattern == "" {
		return nil, nil
	}
	files, err := dataset.GlobIn(roots.Matches, pattern)
	if err != nil {
		return nil, fmt.Errorf("master: data.test: %w", err)
	}
	test, err := dataset.ReadAllIn(roots.Open, files)
	if err != nil {
		return nil, fmt.Errorf("master: read test set: %w", err)
	}
	return test, nil
}
