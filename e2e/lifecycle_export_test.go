package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/model/export"
)

// npzSums prints "name sha256(array.tobytes()) shape" per array of an npz,
// as numpy reads it.
const npzSums = `
import sys, hashlib, numpy as np
z = np.load(sys.argv[1])
for k in sorted(z.files):
    a = z[k]
    print(k, hashlib.sha256(a.astype("<f4").tobytes()).hexdigest(), list(a.shape))
`

// TestLifecycleExportNPZ: a finished job's model of pass 1, fetched with
// gctl job model as npz, loads in numpy with the same sha256 per parameter
// as the job's model files; raw and safetensors are written too; an
// unknown pass is exit 2.
func TestLifecycleExportNPZ(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		t.Skipf("no numpy: %v", err)
	}
	work := t.TempDir()
	a := e2erig.StartAgent(t, filepath.Join(work, "agent"))
	e2erig.Housing(t, filepath.Join(work, "data"))
	e2erig.StartDetached(t, a, warmJob("exp", 2))
	st := e2erig.WaitJob(t, a, "exp", "exp to succeed", 4*time.Minute, succeededJob)
	want := warmParamSums(t, filepath.Join(st.ModelDir, model.PassDirName(1)))

	out := filepath.Join(work, "export")
	if _, errs, code := a.Gctl(t, "job", "model", "exp", "--pass", "1", "--out", out); code != 0 {
		t.Fatalf("job model: exit %d: %s", code, errs)
	}
	got, err := exec.Command(py, "-c", npzSums, filepath.Join(out, export.NPZFile)).CombinedOutput()
	if err != nil {
		t.Fatalf("numpy: %v\n%s", err, got)
	}
	for name, sum := range want {
		if !strings.Contains(string(got), name+" "+sum+" ") {
			t.Errorf("numpy reads no %s with sha256 %s:\n%s", name, sum, got)
		}
	}
	for _, f := range []string{"raw", "safetensors"} {
		if _, errs, code := a.Gctl(t, "job", "model", "exp", "--out", filepath.Join(work, f), "--format", f); code != 0 {
			t.Errorf("job model --format %s: exit %d: %s", f, code, errs)
		}
	}
	if sums := warmParamSums(t, filepath.Join(work, "raw")); sums["w"] != warmParamSums(t, filepath.Join(st.ModelDir, model.LatestLink))["w"] {
		t.Errorf("raw export of the newest model: %v", sums)
	}
	if _, errs, code := a.Gctl(t, "job", "model", "exp", "--pass", "7", "--out", filepath.Join(work, "none")); code != 2 || !strings.Contains(errs, "pass 7") {
		t.Errorf("job model --pass 7: exit %d, want 2 naming the pass: %s", code, errs)
	}
}
