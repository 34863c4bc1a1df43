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
// names a directory that holds the program's helper module and a
// sitecustomize.py that refuses to start without LIFECYCLE_MARKER); a
// denied variable and a path list outside the
// allowed paths are exit 2 naming the variable.
func TestLifecycleEnv(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	a, work := programSetup(t)
	lib := filepath.Join(work, "pylib")
	if err := os.Mkdir(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	// The program runs sandboxed: it sees the path list's directory (bound
	// read-only) but writes nothing outside its scratch, so the proof is
	// that it runs at all: gtrainprog.py lives in lib alone, and
	// sitecustomize.py (run from PYTHONPATH) refuses to start without the
	// marker.
	site := "import os\nif os.environ.get('LIFECYCLE_MARKER') != 'seen': raise SystemExit('sitecustomize: no LIFECYCLE_MARKER')\n"
	if err := os.WriteFile(filepath.Join(lib, "sitecustomize.py"), []byte(site), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(work, "ws", "gtrainprog.py"), filepath.Join(lib, "gtrainprog.py")); err != nil {
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
	job.Env = map[string]string{"PYTHONPATH": lib}
	if _, errs, code := a.Gctl(t, "job", "start", "-f", a.WriteSpec(t, job), "--detach"); code != 2 || !strings.Contains(errs, "no LIFECYCLE_MARKER") {
		t.Errorf("a program whose sitecustomize misses its marker: exit %d, want 2 quoting it: %s", code, errs)
	}
	job.Env["LIFECYCLE_MARKER"] = "seen"
	e2erig.StartDetached(t, a, job)
	e2erig.WaitJob(t, a, "env-job", "env-job to succeed", 4*time.Minute, succeededJob)
}
