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
// compute on 2 threads.
func TestThreadsSameModel(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes")
	}
	work := t.TempDir()
	e2erig.Housing(t, filepath.Join(work, "data"))
	// Placement books cores: two trainers of cpu: 2 need more than 2 here.
	a := e2erig.StartAgentWith(t, filepath.Join(work, "agent"), "--cpu", "8")
	sums := map[int]string{}
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
		sums[cpu] = e2erig.ManifestSums(t, e2erig.JobStatus(t, a, name).ModelDir)
	}
	if sums[1] != sums[2] {
		t.Fatalf("the model depends on the trainers' threads:\ncpu 1: %s\ncpu 2: %s", sums[1], sums[2])
	}
}
