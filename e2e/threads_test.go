package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/internal/testing/e2erig"
)

// TestThreadsSameModel: the same sync job with trainers of cpu: 1 and of
// cpu: 2 ends with the same model, bit for bit (a micro-batch's gradient does
// not depend on the threads computing it), and the cpu: 2 trainers did
// compute on 2 threads. Some of their micro-batches were computed early
// (trainer/early.go: started before the master's answer named them), so
// the same model also says the early ones computed what was named.
func TestThreadsSameModel(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes")
	}
	work := t.TempDir()
	e2erig.Housing(t, filepath.Join(work, "data"))
	// Placement books cores: two trainers of cpu: 2 need more than 2 here.
	a := e2erig.StartAgentWith(t, filepath.Join(work, "agent"), "--cpu", "8")
	sums := map[int]string{}
	early := 0
	for _, cpu := range []int{1, 2} {
		name := fmt.Sprintf("threads-%d", cpu)
		if _, errs, code := a.Gctl(t, "job", "start", "-f", e2erig.WriteSpec(t, work, threadsJob(name, cpu))); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errs)
		}
		log, err := os.ReadFile(filepath.Join(a.DataDir, "jobs", name, "log", "trainer-0.log"))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("threads=%d", cpu); !strings.Contains(string(log), want) {
			t.Fatalf("%s: trainer-0's log does not say %s:\n%s", name, want, log)
		}
		early += earlyMicroBatches(t, filepath.Join(a.DataDir, "jobs", name, "log"))
		sums[cpu] = e2erig.ManifestSums(t, e2erig.JobStatus(t, a, name).ModelDir)
	}
	if early == 0 {
		t.Fatal("no trainer computed a micro-batch early: the test does not cover them")
	}
	if sums[1] != sums[2] {
		t.Fatalf("the model depends on the trainers' threads:\ncpu 1: %s\ncpu 2: %s", sums[1], sums[2])
	}
}

// earlyMicroBatches sums the early micro-batches the trainers of a job's
// log directory pushed, as their "training done" lines say.
func earlyMicroBatches(t *testing.T, logDir string) int {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(logDir, "trainer-*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no trainer logs in %s: %v", logDir, err)
	}
	sum := 0
	for _, f := range logs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			var n int
			if i := strings.Index(l, " early_micro_batches="); i >= 0 && strings.Contains(l, `msg="training done"`) {
				if _, err := fmt.Sscanf(l[i:], " early_micro_batches=%d", &n); err != nil {
					t.Fatalf("%s: %q: %v", f, l, err)
				}
				sum += n
			}
		}
	}
	return sum
}
