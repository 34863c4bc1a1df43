package master

import (
	"context"
	"fmt"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/dataset"
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
}

// loadJob reads the job's record (refusing one of another revision than
// wantRev, unless 0) and cuts its training data into tasks.
func loadJob(ctx context.Context, cli *clientv3.Client, job string, wantRev int64) (*jobData, error) {
	rec, rev, err := coord.GetJobRecord(ctx, cli, job)
	if err != nil {
		return nil, fmt.Errorf("master: read job: %w", err)
	}
	if err := coord.CheckJobRev(job, wantRev, rev); err != nil {
		return nil, fmt.Errorf("master: %w", err)
	}
	spec := &rec.Spec
	layout, err := client.NewLayout(spec)
	if err != nil {
		return nil, err
	}
	files, err := dataset.Glob(spec.Data.Train)
	if err != nil {
		return nil, fmt.Errorf("master: data.train: %w", err)
	}
	tasks, err := core.CutTasks(files, spec.Data.ChunksPerTask)
	if err != nil {
		return nil, fmt.Errorf("master: %w", err)
	}
	test, err := readTestSet(spec.Data.Test)
	if err != nil {
		return nil, err
	}
	return &jobData{rev: rev, spec: spec, layout: layout, tasks: tasks, test: test}, nil
}

// readTestSet reads every example of the test shards (pattern "": none).
func readTestSet(pattern string) ([]dataset.Example, error) {
	if pattern == "" {
		return nil, nil
	}
	files, err := dataset.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("master: data.test: %w", err)
	}
	test, err := dataset.ReadAll(files)
	if err != nil {
		return nil, fmt.Errorf("master: read test set: %w", err)
	}
	return test, nil
}
