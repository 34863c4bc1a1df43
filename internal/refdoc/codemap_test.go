package refdoc

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The README's code map names every package of the module, and nothing
// that does not exist: a package added, moved or split without its row
// fails here. A package needs its own row, except a main package or a
// test helper (a name ending in "test") under a folder that has one, such
// as bench/cmd under bench/.
func TestReadmeCodeMap(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	listed := codeMapPaths(t, root)
	for _, p := range listed {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("the README's code map names %s: %v", p, err)
		}
	}
	for dir, name := range goPackages(t, root) {
		if slices.Contains(listed, dir) || (name == "main" || strings.HasSuffix(name, "test")) && underListed(dir, listed) {
			continue
		}
		t.Errorf("package %s (%s) has no row in the README's code map: add one saying what it owns and must not touch", name, dir)
	}
}

// codeMapPaths are the paths in the "where" column of the README's code
// map, without their trailing slash.
func codeMapPaths(t *testing.T, root string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## Code map\n")
	if !ok {
		t.Fatal(`README.md has no "## Code map" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	path := regexp.MustCompile("`([a-z0-9_/]+)`")
	var paths []string
	for line := range strings.Lines(section) {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		for _, m := range path.FindAllStringSubmatch(cells[2], -1) {
			paths = append(paths, strings.TrimSuffix(m[1], "/"))
		}
	}
	if len(paths) < 10 {
		t.Fatalf("the README's code map lists %d paths; is the table still there?", len(paths))
	}
	return paths
}

// goPackages maps each folder of the module that holds non-test Go files
// to its package name.
func goPackages(t *testing.T, root string) map[string]string {
	t.Helper()
	pkgs := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		if rel != "." {
			pkgs[filepath.ToSlash(rel)] = f.Name.Name
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func underListed(dir string, listed []string) bool {
	for d := filepath.Dir(dir); d != "."; d = filepath.Dir(d) {
		if slices.Contains(listed, d) {
			return true
		}
	}
	return false
}
