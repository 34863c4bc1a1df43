package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/internal/testing/wait"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/master"
	"github.com/gtrain/gtrain/pserver"
	"github.com/gtrain/gtrain/trainer"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// reshardInprocSpec is fit-a-line with Adam (two optimizer slots to re-cut)
// and a checkpoint every 5 steps; pserverBounds, when set, are the {min,
// max} of its 2 pservers.
func reshardInprocSpec(t *testing.T, name, dir string, pserverBounds ...int) jobspec.Spec {
	t.Helper()
	s := fitALineJob(name, jobspec.ModeSync, 6, dir)
	s.Optimizer.Kind = jobspec.OptimizerAdam
	s.Checkpoint = jobspec.CheckpointSpec{Every: "5", Keep: 3}
	if len(pserverBounds) == 2 {
		s.PserversMin, s.PserversMax = pserverBounds[0], pserverBounds[1]
	}
	return parsed(t, s)
}

// TestInProcessReshardMasterDiesAfterCommit: the master of a sync job with 2
// pservers dies right after it committed layout generation 1 (3 pservers
// from the newest global checkpoint), before rolling the job back to it. The
// pservers re-shard in place, a new pserver-2 restores its re-cut, and the
// successor master rolls back to the checkpoint in a new epoch (the
// trainers' reports of the step after it are void: their pushes went to the
// old layout), resumes and records the pause. Every record is applied once per pass and the model (Adam: its
// moments are re-cut too) equals a run with 2 pservers throughout, bit for bit.
func TestInProcessReshardMasterDiesAfterCommit(t *testing.T) {
	cli := startEtcd(t)
	dir := t.TempDir()
	e2erig.Housing(t, dir)
	ref := reshardInprocSpec(t, "reshard-ref", dir)
	submit(t, cli, ref)
	runInProcess(t, cli, dir, ref.Name, 2, 2)
	want := paramSums(t, dir, ref.Name)

	spec := reshardInprocSpec(t, "reshard-crash", dir, 1, 3)
	submit(t, cli, spec)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mctx, killMaster := context.WithCancel(ctx)
	errs := make(chan error, 6)
	run := func(ctx context.Context, worker string) {
		go func() { errs <- startRole(ctx, cli, dir, spec.Name, worker) }()
	}
	for _, w := range []string{"pserver-0", "pserver-1", "trainer-0", "trainer-1"} {
		run(ctx, w)
	}
	// The killed master's own end (often an error: a save cut short) is no failure.
	go func() { _ = startRole(mctx, cli, dir, spec.Name, "master") }()
	g := waitGlobalStep(t, cli, spec.Name, 10)
	killMaster()
	next := coord.NextLayout(schema.LayoutRecord{}, 2, 3, g.Step, time.Now())
	always := clientv3.Compare(clientv3.CreateRevision(coord.JobKey(spec.Name)), ">", 0)
	if err := coord.CommitLayout(ctx, cli, always, spec.Name, next, g); err != nil {
		t.Fatal(err)
	}
	run(ctx, "pserver-2") // as the scheduler does when the job record's count grows
	run(ctx, "master")
	if st := waitStateOr(t, cli, spec.Name, 60*time.Second, errs); st.State != api.StateSucceeded {
		t.Fatalf("job ended %s (%s)", st.State, st.Reason)
	}
	p := progress(t, cli, spec.Name)
	if refP := progress(t, cli, ref.Name); !slices.Equal(p.SamplesApplied, refP.SamplesApplied) {
		t.Fatalf("samples applied %v, want %v", p.SamplesApplied, refP.SamplesApplied)
	}
	if got := paramSums(t, dir, spec.Name); got != want {
		t.Fatalf("re-sharded model differs:\n%s\nwant\n%s", got, want)
	}
	l, err := coord.GetLayout(ctx, cli, spec.Name)
	if err != nil || l.Generation != 1 || l.PauseMs <= 0 {
		t.Fatalf("layout %+v (%v): the successor must record the pause", l, err)
	}
	// The successor must not trust the trainers' reports of the old epoch:
	// their pushes went to the old layout.
	events, err := coord.ListJSON[api.Event](ctx, cli, coord.EventPrefix(spec.Name))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(events, func(e api.Event) bool { return strings.Contains(e.What, "was under way when the master changed") }) {
		t.Fatalf("the successor did not roll back into a new epoch: %+v", events)
	}
	t.Logf("re-sharded 2 -> 3 at step %d; the successor recorded a pause of %d ms", g.Step, l.PauseMs)
	cancel()
	for range 6 {
		if err := <-errs; err != nil {
			t.Errorf("role failed: %v", err)
		}
	}
}

func paramSums(t *testing.T, dir, job string) string {
	t.Helper()
	var sums []string
	for _, p := range manifestOf(t, dir, job).Params {
		sums = append(sums, p.Name+"="+p.SHA256)
	}
	return strings.Join(sums, ",")
}

// startRole runs one role of job in this process until ctx ends.
func startRole(ctx context.Context, cli *clientv3.Client, dir, job, worker string) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("worker", worker)
	role, i, err := jobspec.ParseWorker(worker)
	switch {
	case worker == "master":
		cfg := master.DefaultConfig()
		cfg.Job, cfg.DataDir, cfg.Log, cfg.LongPoll = job, dir, log, 200*time.Millisecond
		return master.Run(ctx, cli, cfg)
	case err != nil:
		return err
	case role == jobspec.RolePserver:
		cfg := pserver.DefaultConfig()
		cfg.Job, cfg.Index, cfg.DataDir, cfg.Log = job, i, dir, log
		return pserver.Run(ctx, cli, cfg)
	}
	cfg := trainer.DefaultConfig()
	cfg.Job, cfg.Worker, cfg.Log = job, worker, log
	return trainer.Run(ctx, cli, cfg)
}

// waitGlobalStep waits for a global checkpoint at or after step.
func waitGlobalStep(t *testing.T, cli *clientv3.Client, job string, step int64) schema.GlobalCheckpoint {
	t.Helper()
	var g schema.GlobalCheckpoint
	wait.Eventually(t, 60*time.Second, fmt.Sprintf("a global checkpoint at step %d", step), func() (bool, string) {
		g = schema.GlobalCheckpoint{}
		_, err := coord.GetJSON(context.Background(), cli, coord.GlobalCheckpointKey(job), &g)
		return err == nil && g.Step >= step, fmt.Sprintf("%+v, %v", g, err)
	})
	return g
}

// waitStateOr is waitState that names the roles that ended meanwhile (an
// in-process role that gives up is not restarted as the agent would).
func waitStateOr(t *testing.T, cli *clientv3.Client, job string, timeout time.Duration, errs chan error) schema.StateRecord {
	t.Helper()
	var st schema.StateRecord
	err := wait.Until(timeout, "job "+job+" to finish", func() (bool, string) {
		var err error
		st, err = coord.JobState(context.Background(), cli, job)
		return err == nil && api.Terminal(st.State), fmt.Sprintf("%+v, %v", st, err)
	})
	if err != nil {
		var ended []string
		for len(errs) > 0 {
			ended = append(ended, fmt.Sprint(<-errs))
		}
		t.Fatalf("%v; roles ended meanwhile: %q", err, ended)
	}
	return st
}
