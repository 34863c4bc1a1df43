package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// parallelCall is a test function's t.Parallel() call.
var parallelCall = regexp.MustCompile(`(?m)^\tt\.Parallel\(\)`)

// idleParallel must count this package's parallel tests: one more than it
// says would queue behind the others (see idleTestsAtOnce).
func TestIdleParallelCountsTheParallelTests(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n += len(parallelCall.FindAll(src, -1))
	}
	if n != idleParallel {
		t.Errorf("%d tests call t.Parallel, idleParallel says %d: change it (and say why the new one idles)", n, idleParallel)
	}
}
