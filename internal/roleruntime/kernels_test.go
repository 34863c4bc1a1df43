//go:build cgo && openblas

package roleruntime

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/model"
)

// TestReexecWithKernels: the process comes back as itself (same pid, same
// test) on the kernels named, and says whose choice they are. No CPU here
// makes OpenBLAS fall back, so the test asks for the exec directly, from
// Prescott (what OpenBLAS chose on an unknown Xeon) to Sandybridge, which
// OpenBLAS picks for no CPU of today's: only the exec's variable gets it.
func TestReexecWithKernels(t *testing.T) {
	switch os.Getenv("GTRAIN_REEXEC_CHILD") {
	case "before":
		fmt.Fprintln(os.Stderr, os.Getpid())
		os.Setenv("GTRAIN_REEXEC_CHILD", "after")
		t.Fatal(reexecWith("Sandybridge", "Prescott")) // returns only on failure
	case "after":
		fmt.Printf("%d\n%s\n", os.Getpid(), model.Kernels())
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestReexecWithKernels$")
	// An empty OPENBLAS_CORETYPE (unpinned) must not hide the one the exec
	// sets from OpenBLAS, which reads the first.
	cmd.Env = append(WithoutEnv(os.Environ(), "OPENBLAS_CORETYPE", model.ChoseEnv), "OPENBLAS_CORETYPE=", "GTRAIN_REEXEC_CHILD=before")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s%s", err, out, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	pidBefore := strings.TrimSpace(strings.SplitN(stderr.String(), "\n", 2)[0])
	if len(lines) < 2 || lines[0] != pidBefore {
		t.Fatalf("child printed %q after the exec and pid %q before: want the same pid", out, pidBefore)
	}
	if want := "OpenBLAS Sandybridge (gtrain's choice for this CPU; OpenBLAS chose Prescott)"; lines[1] != want {
		t.Fatalf("kernels after the exec %q, want %q", lines[1], want)
	}
}
