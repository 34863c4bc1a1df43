package refdoc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// DocPath is the reference, relative to the module root.
const DocPath = "docs/reference.md"

// UpdateEnv set to 1 makes Check rewrite sections instead of comparing them.
const UpdateEnv = "REFDOC_UPDATE"

// Regenerate is what a failing check tells the reader to run.
const Regenerate = "go generate ./internal/refdoc"

func beginMarker(name string) string { return "<!-- BEGIN GENERATED " + name + " -->\n" }
func endMarker(name string) string   { return "<!-- END GENERATED " + name + " -->" }

// Section returns the text between the markers of section name.
func Section(doc, name string) (string, error) {
	start, end, err := bounds(doc, name)
	if err != nil {
		return "", err
	}
	return doc[start:end], nil
}

// Replace returns doc with section name's text replaced by body.
func Replace(doc, name, body string) (string, error) {
	start, end, err := bounds(doc, name)
	if err != nil {
		return "", err
	}
	return doc[:start] + body + doc[end:], nil
}

// bounds finds the text of section name: from after its begin marker's
// line to the start of its end marker. Each marker must occur once.
func bounds(doc, name string) (start, end int, err error) {
	begin, stop := beginMarker(name), endMarker(name)
	if strings.Count(doc, begin) != 1 || strings.Count(doc, stop) != 1 {
		return 0, 0, fmt.Errorf("%s: want exactly one %q line and one %q line", DocPath, strings.TrimSpace(begin), stop)
	}
	start = strings.Index(doc, begin) + len(begin)
	end = strings.Index(doc, stop)
	if end < start {
		return 0, 0, fmt.Errorf("%s: the end marker of section %s comes before its begin marker", DocPath, name)
	}
	return start, end, nil
}

// Root is the module root: the nearest directory at or above the working
// directory (a test's package directory) that holds go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod at or above the working directory")
		}
		dir = parent
	}
}

// ReadDoc returns the reference's text.
func ReadDoc(t testing.TB) string {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, DocPath))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Check fails t when section name of the reference is not body; with
// REFDOC_UPDATE=1 it writes body into the section instead.
func Check(t testing.TB, name, body string) {
	t.Helper()
	doc := ReadDoc(t)
	got, err := Section(doc, name)
	if err != nil {
		t.Fatal(err)
	}
	if got == body {
		return
	}
	if os.Getenv(UpdateEnv) != "1" {
		t.Fatalf("%s: section %s is not what the code says now; run `%s` and review the diff.\n%s",
			DocPath, name, Regenerate, firstDifference(got, body))
	}
	doc, err = Replace(doc, name, body)
	if err != nil {
		t.Fatal(err)
	}
	root, _ := Root()
	if err := os.WriteFile(filepath.Join(root, DocPath), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: rewrote section %s", DocPath, name)
}

// firstDifference quotes the first line where the document and the code
// part ways, so the failure says what changed without a diff tool.
func firstDifference(doc, code string) string {
	a, b := strings.Split(doc, "\n"), strings.Split(code, "\n")
	for i := range max(len(a), len(b)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return fmt.Sprintf("first difference, line %d of the section:\n  doc:  %s\n  code: %s", i+1, x, y)
		}
	}
	return ""
}

// Anchor is the link target GitHub gives a heading: lower case, spaces as
// hyphens, punctuation other than '-' and '_' dropped.
func Anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}
