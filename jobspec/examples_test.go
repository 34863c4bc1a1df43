package jobspec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every example spec must validate and read its data where the README's
// `gctl data convert --out` commands write it (a spec pointing elsewhere
// fails at submit with "matched no file" after following the README).
func TestExampleSpecsMatchTheREADMEsDataPaths(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	specs, err := filepath.Glob(filepath.Join("..", "examples", "*.yaml"))
	// A demo directory's specs too (examples/recommendation/).
	inDirs, err2 := filepath.Glob(filepath.Join("..", "examples", "*", "*.yaml"))
	specs = append(specs, inDirs...)
	if err != nil || err2 != nil || len(inDirs) == 0 {
		t.Fatalf("no example specs: %v %v", err, err2)
	}
	for _, file := range specs {
		s, err := ParseFile(file)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", file, err)
		}
		for _, glob := range []string{s.Data.Train, s.Data.Test} {
			rel, err := filepath.Rel(root, glob)
			if err != nil {
				t.Fatal(err)
			}
			prefix := strings.TrimSuffix(strings.TrimSuffix(rel, "-train-*"), "-test-*")
			if !strings.Contains(string(readme), "--out "+prefix+" ") {
				t.Errorf("%s reads %s, but no README command converts into --out %s", file, rel, prefix)
			}
		}
	}
}
