package main

import (
	"strings"
	"testing"
)

func TestMissingNamesWhatToInstall(t *testing.T) {
	requires["test_group"] = []need{
		{"a thing", "apt-get install thing", func() bool { return false }},
		{"another", "apt-get install other", func() bool { return true }},
	}
	defer delete(requires, "test_group")
	got := missing("test_group")
	if !strings.Contains(got, "needs a thing (apt-get install thing)") || strings.Contains(got, "other") {
		t.Errorf("missing = %q, want only the absent need with its package", got)
	}
	if got := missing("no_needs"); got != "" {
		t.Errorf("a group without needs is missing %q", got)
	}
}
