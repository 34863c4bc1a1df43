package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/e2erig"
)

// TestLifecycleEnv: a spec's env reaches the model program (PYTHONPATH
// names a directory whose sitecustomize.py writes a file where
// LIFECYCLE_MARKER says); a denied variable and a path list outside the
// allowed paths are exit 2 naming the variable.
func TestLifecycleEnv(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	a, work := programSetup(t)
	lib, marks := filepath.Join(work, "pylib"), filepath.Join(work, "marks")
	for _, d := range []string{lib, marks} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	site := "import os\nd = os.environ.get('LIFECYCLE_MARKER')\nif d: open(os.path.join(d, str(os.getpid())), 'w').close()\n"
	if err := os.WriteFile(filepath.Join(lib, "sitecustomize.py"), []byte(site), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := programJob("env-bad", "")
	for _, tc := range []struct{ name, value string }{{"LD_PRELOAD", "/tmp/x.so"}, {"PYTHONPATH", "/etc"}} {
		bad.Env = map[string]string{tc.name: tc.value}
		if _, errs, code := a.Gctl(t, "job", "start", "-f", a.WriteSpec(t, bad), "--detach"); code != 2 || !strings.Contains(errs, "env."+tc.name) {
			t.Errorf("env %s=%s: exit %d, want 2 naming env.%s: %s", tc.name, tc.value, code, tc.name, errs)
		}
	}
	job := programJob("env-job", "")
	job.Passes = 1
	job.Env = map[string]string{"PYTHONPATH": lib, "LIFECYCLE_MARKER": marks}
	e2erig.StartDetached(t, a, job)
	e2erig.WaitJob(t, a, "env-job", "env-job to succeed", 4*time.Minute, succeededJob)
	if ents, _ := os.ReadDir(marks); len(ents) == 0 {
		t.Errorf("no program of the job saw its env: %s is empty", marks)
	}
}
