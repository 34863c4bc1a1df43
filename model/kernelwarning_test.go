//go:build cgo && openblas

package model

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestKernelWarning: OpenBLAS's kernels for this CPU draw no warning; its
// SSE3 kernels (what it falls back to on a CPU it does not know, forced here
// in a child process, since OpenBLAS reads OPENBLAS_CORETYPE as it loads)
// draw one naming the kernel to pin, on a CPU with AVX2.
func TestKernelWarning(t *testing.T) {
	if os.Getenv("GTRAIN_KERNEL_CHILD") == "1" {
		os.Stdout.WriteString(Kernels() + "\n" + KernelWarning() + "\n")
		return
	}
	old := slices.ContainsFunc(oldCores, func(c string) bool { return strings.HasPrefix(Kernels(), "OpenBLAS "+c) })
	if w := KernelWarning(); w != "" && !old {
		t.Fatalf("kernels %s, with AVX: warning %q", Kernels(), w)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKernelWarning$")
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, ChoseEnv+"=") }), "GTRAIN_KERNEL_CHILD=1", "OPENBLAS_CORETYPE=Prescott")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(out), "\n", 3)
	if len(lines) < 2 || lines[0] != "OpenBLAS Prescott" {
		t.Fatalf("child output %q, want the Prescott kernels first", out)
	}
	if want := cpu.X86.HasAVX2; strings.Contains(lines[1], "OPENBLAS_CORETYPE=Prescott pins its Prescott kernels") != want {
		t.Fatalf("warning %q (CPU with AVX2: %v)", lines[1], want)
	}
}

// TestPinNote: Haswell's AVX2 kernels pinned (in a child process, as an
// operator's agent environment would) draw a note naming the pin on a CPU
// with AVX-512, none elsewhere; gtrain's own choice draws none.
func TestPinNote(t *testing.T) {
	if os.Getenv("GTRAIN_PIN_CHILD") == "1" {
		os.Stdout.WriteString(PinNote() + "\n")
		return
	}
	run := func(extra ...string) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPinNote$")
		cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
			return strings.HasPrefix(kv, ChoseEnv+"=") || strings.HasPrefix(kv, "OPENBLAS_CORETYPE=")
		}), append(extra, "GTRAIN_PIN_CHILD=1")...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.SplitN(string(out), "\n", 2)[0]
	}
	note := run("OPENBLAS_CORETYPE=Haswell")
	if want := hostFeatures().avx512; strings.Contains(note, "OPENBLAS_CORETYPE=Haswell pins its Haswell kernels, without AVX-512") != want {
		t.Fatalf("note %q (CPU with AVX-512: %v)", note, want)
	}
	if note := run("OPENBLAS_CORETYPE=Haswell", ChoseEnv+"=Prescott"); note != "" {
		t.Fatalf("gtrain's own choice: note %q", note)
	}
	if note := run(); note != "" {
		t.Fatalf("no pin: note %q", note)
	}
}
