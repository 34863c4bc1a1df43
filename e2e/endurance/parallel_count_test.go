package endurance

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// parallelCall and testFunc are a test function's t.Parallel() call and
// its declaration.
var (
	parallelCall = regexp.MustCompile(`(?m)^\tt\.Parallel\(\)`)
	testFunc     = regexp.MustCompile(`(?m)^func Test\w+\(t \*testing\.T\)`)
)

// allParallel must count this package's tests, and each must call
// t.Parallel: one more than it says would queue behind the others, and a
// test that does not would run first, alone.
func TestParallelCountsTheTests(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	tests, parallel := 0, 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		tests += len(testFunc.FindAll(src, -1))
		parallel += len(parallelCall.FindAll(src, -1))
	}
	if tests != allParallel || parallel != tests {
		t.Errorf("%d tests, %d call t.Parallel, allParallel says %d: every test must call it, and allParallel count them", tests, parallel, allParallel)
	}
}
