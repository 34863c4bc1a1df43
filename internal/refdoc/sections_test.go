package refdoc

import (
	"reflect"
	"strings"
	"testing"
)

func TestSectionReplace(t *testing.T) {
	doc := "intro\n<!-- BEGIN GENERATED a -->\nold\n<!-- END GENERATED a -->\nafter\n"
	got, err := Replace(doc, "a", "new\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "intro\n<!-- BEGIN GENERATED a -->\nnew\n<!-- END GENERATED a -->\nafter\n"; got != want {
		t.Errorf("Replace = %q, want %q", got, want)
	}
	if body, _ := Section(got, "a"); body != "new\n" {
		t.Errorf("Section = %q, want %q", body, "new\n")
	}
	for _, bad := range []string{
		"no markers",
		"<!-- BEGIN GENERATED a -->\n",
		"<!-- END GENERATED a --><!-- BEGIN GENERATED a -->\n",
		doc + doc,
	} {
		if _, err := Section(bad, "a"); err == nil {
			t.Errorf("Section(%q) found a section", bad)
		}
	}
}

func TestFirstDifference(t *testing.T) {
	got := firstDifference("a\nb\nc\n", "a\nB\nc\n")
	if !strings.Contains(got, "line 2") || !strings.Contains(got, "doc:  b") || !strings.Contains(got, "code: B") {
		t.Errorf("firstDifference = %q, want line 2 quoted from both sides", got)
	}
}

func TestAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"Exit codes":                   "exit-codes",
		"`gctl job start`":             "gctl-job-start",
		"The status JSON (job status)": "the-status-json-job-status",
		"restarts.hung_after":          "restartshung_after",
	} {
		if got := Anchor(heading); got != want {
			t.Errorf("Anchor(%q) = %q, want %q", heading, got, want)
		}
	}
}

// TestCoverage is what makes a new field fail the reference tests: a key
// without a meaning, or a meaning without a key, is an error naming it.
func TestCoverage(t *testing.T) {
	type inner struct {
		B int `json:"b"`
	}
	type doc struct {
		A     string  `json:"a"`
		Inner []inner `json:"inner"`
		Skip  int     `json:"-"`
	}
	typ := reflect.TypeFor[doc]()
	full := map[string]string{"a": "x", "inner": "y", "inner[].b": "z"}
	if _, err := JSONTable(typ, full); err != nil {
		t.Fatalf("all keys described: %v", err)
	}
	delete(full, "inner[].b")
	if _, err := JSONTable(typ, full); err == nil || !strings.Contains(err.Error(), "inner[].b") {
		t.Errorf("a key without meaning: err = %v, want it named", err)
	}
	full["inner[].b"], full["gone"] = "z", "w"
	if _, err := JSONTable(typ, full); err == nil || !strings.Contains(err.Error(), "gone") {
		t.Errorf("a meaning without key: err = %v, want it named", err)
	}
}

func TestTypeNames(t *testing.T) {
	for _, c := range []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[*float64](), "number or null"},
		{reflect.TypeFor[[]int64](), "array of integers"},
		{reflect.TypeFor[map[string]string](), "object of strings"},
		{reflect.TypeFor[[]struct{}](), "array of objects"},
	} {
		if got := TypeName(c.typ); got != c.want {
			t.Errorf("TypeName(%s) = %q, want %q", c.typ, got, c.want)
		}
	}
}
