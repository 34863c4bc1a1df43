// Package torchtest finds, in tests, the PyTorch that program tests run:
// Debian's python3 with python3-torch, which CI installs, so a missing
// torch fails a test instead of skipping it.
//
// It is test support: it must not be imported by production code.
package torchtest

import (
	"os/exec"
	"testing"
)

// Python is Debian's interpreter, with numpy and torch where CI set it up.
const Python = "/usr/bin/python3"

// Need fails the test when Python cannot import torch: a broken machine,
// not a reason to skip.
func Need(t testing.TB) {
	t.Helper()
	if out, err := exec.Command(Python, "-c", "import torch").CombinedOutput(); err != nil {
		t.Fatalf("%s cannot import torch (apt-get install python3-torch): %v\n%s", Python, err, out)
	}
}
