package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestOpenBLASBuild(t *testing.T) {
	for _, c := range []struct {
		settings []debug.BuildSetting
		want     bool
	}{
		{[]debug.BuildSetting{{Key: "-tags", Value: "openblas"}, {Key: "CGO_ENABLED", Value: "1"}}, true},
		{[]debug.BuildSetting{{Key: "-tags", Value: "netgo,openblas"}, {Key: "CGO_ENABLED", Value: "1"}}, true},
		{[]debug.BuildSetting{{Key: "-tags", Value: "openblas"}, {Key: "CGO_ENABLED", Value: "0"}}, false},
		{[]debug.BuildSetting{{Key: "-tags", Value: "openblasx"}, {Key: "CGO_ENABLED", Value: "1"}}, false},
		{[]debug.BuildSetting{{Key: "CGO_ENABLED", Value: "1"}}, false},
	} {
		if got := openBLASBuild(c.settings); got != c.want {
			t.Errorf("openBLASBuild(%v) = %v, want %v", c.settings, got, c.want)
		}
	}
}

// TestCheckKernelsRefusesAnotherBuild builds a stand-in gtraind with the
// other kernels than this test binary's and one with the same: the first
// is refused, naming both and make bench, the second and a missing one pass.
func TestCheckKernelsRefusesAnotherBuild(t *testing.T) {
	if err := checkKernels(t.TempDir()); err != nil {
		t.Fatalf("no gtraind: %v", err)
	}
	src := filepath.Join(t.TempDir(), "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ours := openBLASBench()
	build := func(openBLAS bool) string {
		dir := t.TempDir()
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "gtraind"), src)
		cmd.Env = append(os.Environ(), "GOFLAGS=", "CGO_ENABLED=1")
		if openBLAS {
			cmd.Env = append(cmd.Env, "GOFLAGS=-tags=openblas")
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		return dir
	}
	if err := checkKernels(build(ours)); err != nil {
		t.Errorf("a gtraind built like this bench: %v", err)
	}
	err := checkKernels(build(!ours))
	if err == nil || !strings.Contains(err.Error(), "make bench") || !strings.Contains(err.Error(), "OpenBLAS") || !strings.Contains(err.Error(), "pure-Go") {
		t.Errorf("a gtraind built with other kernels: %v, want a refusal naming both kernels and make bench", err)
	}
}
