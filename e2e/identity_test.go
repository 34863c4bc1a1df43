package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/jobspec"
)

// Two jobs share one checkpoint.dir, and a job name is used again after a
// purge: each job (name and record revision) writes, loads and prunes only
// its own checkpoint files, and each job's model goes to
// <checkpoint.dir>/model/<job>.
func TestInProcessJobsShareACheckpointDir(t *testing.T) {
	cli := startEtcd(t)
	dir := t.TempDir()
	e2erig.Housing(t, dir)
	shared := filepath.Join(t.TempDir(), "shared")
	spec := func(name string) jobspec.Spec {
		s := fitALine(t, name, jobspec.ModeSync, dir, 3)
		s.Checkpoint.Dir, s.Checkpoint.Every, s.Checkpoint.Keep = shared, "5", 2
		return s
	}
	run := func(name string) (files []string) {
		submit(t, cli, spec(name))
		_, rev, err := coord.GetJobRecord(context.Background(), cli, name)
		if err != nil {
			t.Fatal(err)
		}
		runInProcess(t, cli, dir, name, 2, 2)
		if p := progress(t, cli, name); p.ModelDir != filepath.Join(shared, "model", name) {
			t.Errorf("job %s: model_dir %s, want it on the shared checkpoint.dir", name, p.ModelDir)
		}
		files = checkpointFiles(t, shared, fmt.Sprintf("%s_r%d_", name, rev))
		// keep 2 of pserver-0, pserver-1 and the master; pruning also spares
		// the files of the 2 kept global checkpoints as they were when the
		// newest files were written, so at most 4 each remain.
		if len(files) < 2*3 || len(files) > 4*3 || len(files)%3 != 0 {
			t.Errorf("job %s (rev %d) left checkpoint files %v, want 2 to 4 for each of its pservers and its master", name, rev, files)
		}
		return files
	}
	first := run("a")
	other := run("b")
	if got := checkpointFiles(t, shared, "a_"); !slices.Equal(got, first) {
		t.Errorf("job b touched job a's files: %v, were %v", got, first)
	}
	if _, err := cli.Txn(context.Background()).Then(coord.PurgeJobOps("a")...).Commit(); err != nil {
		t.Fatal(err)
	}
	again := run("a")
	both := append(slices.Clone(first), again...)
	slices.Sort(both)
	if got := checkpointFiles(t, shared, "a_"); !slices.Equal(got, both) {
		t.Errorf("files of job a after its name was used again: %v, want the old %v and the new %v", got, first, again)
	}
	if got := checkpointFiles(t, shared, "b_"); !slices.Equal(got, other) {
		t.Errorf("the new job a touched job b's files: %v, were %v", got, other)
	}
	evs, err := coord.ListJSON[api.Event](context.Background(), cli, coord.EventPrefix("a"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if strings.Contains(e.What, "has checkpoints") || strings.Contains(e.What, "restored from checkpoint") {
			t.Errorf("the new job a saw the old one's checkpoints: %q", e.What)
		}
	}
}

// checkpointFiles lists the checkpoint files in dir and dir/master whose
// names start with prefix, sorted.
func checkpointFiles(t *testing.T, dir, prefix string) []string {
	t.Helper()
	var out []string
	for _, d := range []string{dir, filepath.Join(dir, "master")} {
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), prefix) && strings.HasSuffix(e.Name(), ".ckpt") {
				out = append(out, filepath.Join(filepath.Base(d), e.Name()))
			}
		}
	}
	slices.Sort(out)
	return out
}
