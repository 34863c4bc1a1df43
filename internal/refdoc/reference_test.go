package refdoc

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/jobspec"
)

// The Reference tests hold docs/reference.md's generated sections to the
// code; `go generate ./internal/refdoc` rewrites them.

func TestReferenceJobSpec(t *testing.T) {
	body, err := SpecTable()
	if err != nil {
		t.Fatal(err)
	}
	Check(t, "job-spec", body)
}

func TestReferenceDocuments(t *testing.T) {
	for _, d := range Documents {
		body, err := JSONTable(d.Type, d.Meanings)
		if err != nil {
			t.Fatal(err)
		}
		Check(t, d.Section, body)
	}
}

func TestReferenceStates(t *testing.T) {
	for _, s := range stateTables {
		values, err := ConstValues(StateFile, s.Type)
		if err != nil {
			t.Fatal(err)
		}
		body, err := ValueTable(values, s.Meanings)
		if err != nil {
			t.Fatalf("%s %s: %v (stateTables in internal/refdoc/states.go)", StateFile, s.Type, err)
		}
		Check(t, s.Section, body)
	}
}

func TestReferenceRecordLayout(t *testing.T) {
	block, err := PackageDocBlock("recordio/doc.go")
	if err != nil {
		t.Fatal(err)
	}
	Check(t, "record-layout", "```text\n"+block+"```\n")
}

func TestReferenceBench(t *testing.T) {
	body, err := BenchTable()
	if err != nil {
		t.Fatal(err)
	}
	Check(t, "bench-groups", body)
}

// TestSpecLimits holds the limits the spec table states as literals (the
// unexported maxima of jobspec) to what Validate accepts: the last value
// inside a limit passes, the first outside it is rejected naming the field.
func TestSpecLimits(t *testing.T) {
	for _, c := range []struct {
		yaml, field string
		ok          bool
	}{
		{"restarts: {limit: 1000}", "", true},
		{"restarts: {limit: 1001}", "restarts.limit", false},
		{"restarts: {window: 24h}", "", true},
		{"restarts: {window: 24h0m1s}", "restarts.window", false},
		{"restarts: {hung_after: 1h}", "", true},
		{"restarts: {hung_after: 1h0m1s}", "restarts.hung_after", false},
		{"stragglers: {factor: 2}", "", true},
		{"stragglers: {factor: 1}", "stragglers.factor", false},
		{"stragglers: {factor: 100}", "", true},
		{"stragglers: {factor: 101}", "stragglers.factor", false},
		{"stragglers: {min_wait: 1h}", "", true},
		{"stragglers: {min_wait: 1h0m1s}", "stragglers.min_wait", false},
		{"optimizer: {kind: momentum, momentum: 0}", "", true},
		{"seed: 0", "", true},
		{"priority: 1000", "", true},
		{"priority: -1000", "", true},
		{"priority: 1001", "priority", false},
		{"priority: -1001", "priority", false},
	} {
		s, err := jobspec.Parse([]byte(minimalSpec + c.yaml + "\n"))
		if err == nil {
			err = s.Validate()
		}
		var fe *jobspec.FieldError
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: the reference accepts it, Validate says %v", c.yaml, err)
		case !c.ok && (!errors.As(err, &fe) || fe.Field != c.field):
			t.Errorf("%s: the reference rejects it as %s, Validate says %v", c.yaml, c.field, err)
		}
	}
}

var (
	docLink = regexp.MustCompile(`docs/reference\.md#([a-z0-9-]+)`)
	inLink  = regexp.MustCompile(`\]\(#([a-z0-9-]+)\)`)
	heading = regexp.MustCompile("(?m)^#{1,6} (.+)$")
)

// TestReferenceAnchors checks that every link into the reference, from the
// code's comments, the README and the reference itself, names a heading.
func TestReferenceAnchors(t *testing.T) {
	doc := ReadDoc(t)
	anchors := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(doc, -1) {
		anchors[Anchor(m[1])] = true
	}
	links := map[string][]string{DocPath: submatches(inLink, doc)}
	root, _ := Root()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == ".git" || d.Name() == "bin") {
			return skipDir(d, err)
		}
		if !strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, ".md") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		links[rel] = append(links[rel], submatches(docLink, string(b))...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for file, names := range links {
		for _, a := range names {
			if !anchors[a] {
				t.Errorf("%s links to %s#%s, which has no such heading", file, DocPath, a)
			}
		}
	}
}

func skipDir(d os.DirEntry, err error) error {
	if err != nil {
		return err
	}
	return filepath.SkipDir
}

func submatches(re *regexp.Regexp, s string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}
