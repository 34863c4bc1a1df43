package e2erig

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/model"
)

// ManifestSums is the sha256 of every parameter of the model in dir, as
// its manifest lists them: equal sums, a bit-identical model.
func ManifestSums(t *testing.T, dir string) string {
	t.Helper()
	return ModelSums(t, filepath.Join(dir, model.LatestLink))
}

// ModelSums lists the per-parameter sha256 of the model in dir, and of a
// recommender's embedding rows.
func ModelSums(t *testing.T, dir string) string {
	t.Helper()
	m, _, err := model.ReadModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, p := range m.Params {
		fmt.Fprintf(&b, "%s=%s ", p.Name, p.SHA256)
	}
	for _, t := range m.Tables {
		fmt.Fprintf(&b, "table %s: %d rows, ids=%s values=%s ", t.Name, t.Rows, t.IDsSHA256, t.SHA256)
	}
	return b.String()
}

// WorkerRestarts is a worker's name and restart count, for the logs of a
// chaos test.
type WorkerRestarts struct {
	Name     string
	Restarts int
}

// TrainersOf lists the job's trainers and their restarts.
func TrainersOf(st api.JobStatus) (out []WorkerRestarts) {
	for _, w := range st.Trainers {
		out = append(out, WorkerRestarts{w.Name, w.Restarts})
	}
	return out
}

// PserversOf lists the job's pservers and their restarts.
func PserversOf(st api.JobStatus) (out []WorkerRestarts) {
	for _, w := range st.Pservers {
		out = append(out, WorkerRestarts{w.Name, w.Restarts})
	}
	return out
}

// LogTail logs the last n lines of the file at path (an agent's or a
// role's log), after a failure.
func LogTail(t *testing.T, path string, n int) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	t.Logf("--- %s (last lines):\n%s", path, strings.Join(lines[max(0, len(lines)-n):], "\n"))
}

// AssertExact: every pass applied each training record exactly once.
func AssertExact(t *testing.T, st api.JobStatus) {
	t.Helper()
	AssertExactPasses(t, st, ClusterPasses)
}

// AssertExactPasses: the job SUCCEEDED after passes passes, each applying
// each training record exactly once.
func AssertExactPasses(t *testing.T, st api.JobStatus, passes int) {
	t.Helper()
	if st.State != api.StateSucceeded || len(st.SamplesApplied) != passes {
		t.Errorf("job %s: state %s, samples_applied over %d passes, want SUCCEEDED over %d", st.Name, st.State, len(st.SamplesApplied), passes)
	}
	for p, n := range st.SamplesApplied {
		if n != 404 {
			t.Errorf("job %s pass %d: samples_applied %d, want 404 (exactly once)", st.Name, p, n)
		}
	}
}

// AssertSameModel compares the job's final model with the reference, bit
// for bit.
func AssertSameModel(t *testing.T, st api.JobStatus, ref string) {
	t.Helper()
	if sums := ManifestSums(t, st.ModelDir); sums != ref {
		t.Errorf("job %s: final model differs from the uninterrupted run:\n got       %s\n reference %s", st.Name, sums, ref)
	}
}

// LogEvents shows the job's events in the test log.
func LogEvents(t *testing.T, st api.JobStatus) {
	t.Helper()
	for _, e := range st.Events {
		t.Logf("  %s  %s", e.Time.Format("15:04:05.000"), e.What)
	}
}

// CountEvents counts the job's events that begin with prefix.
func CountEvents(st api.JobStatus, prefix string) int {
	n := 0
	for _, e := range st.Events {
		if strings.HasPrefix(e.What, prefix) {
			n++
		}
	}
	return n
}

// AssertEachRecordOnce: no task failed and every one of the job's passes
// counted each of its records once.
func AssertEachRecordOnce(t *testing.T, st api.JobStatus, passes, records int) {
	t.Helper()
	if st.Tasks.Failed != 0 {
		t.Errorf("tasks at the end %+v, want none failed", st.Tasks)
	}
	if len(st.SamplesApplied) != passes {
		t.Errorf("samples_applied covers %d passes, want %d", len(st.SamplesApplied), passes)
	}
	for p, n := range st.SamplesApplied {
		if n != int64(records) {
			t.Errorf("pass %d: samples_applied %d, want %d (each record once)", p, n, records)
		}
	}
}

// FastestPassSeconds is the shortest pass of the job after its first five
// (warm-up: registration, the first pulls); a pass timed at 0 (under the
// clock's grain) counts as 1 ms.
func FastestPassSeconds(st api.JobStatus) float64 {
	fastest := math.Inf(1)
	for _, h := range st.History[min(5, len(st.History)-1):] {
		fastest = min(fastest, max(h.Seconds, 0.001))
	}
	return fastest
}
