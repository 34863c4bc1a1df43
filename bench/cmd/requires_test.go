package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/bench"
)

func TestMissingNamesWhatToInstall(t *testing.T) {
	requires["test_group"] = []need{
		{"a thing", "apt-get install thing", func() bool { return false }, nil},
		{"another", "apt-get install other", func() bool { return true }, nil},
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

// TestTableListsWhatWasLeftOut: a figure not measured is listed, with why,
// after the figures of the printed table, not only as the run went; the
// JSON holds the figures measured.
func TestTableListsWhatWasLeftOut(t *testing.T) {
	tab := &table{}
	tab.add(bench.Result{Name: "measured_fig", Value: 2, Unit: "x", Ceiling: 4})
	tab.notMeasured("peer_fig", needTorch.missing())
	var printed bytes.Buffer
	out := filepath.Join(t.TempDir(), "results.json")
	if err := tab.write(&printed, out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(printed.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "peer_fig NOT MEASURED: needs PyTorch") || !strings.Contains(last, "apt-get install") {
		t.Errorf("the table's last line is %q, want peer_fig NOT MEASURED with what to install:\n%s", last, printed.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []bench.Result
	if err := json.Unmarshal(b, &got); err != nil || len(got) != 1 || got[0].Name != "measured_fig" || got[0].Ratio != 0.5 {
		t.Errorf("results.json = %s (%v), want measured_fig alone", b, err)
	}
	if err := (&table{}).write(&printed, out); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); strings.TrimSpace(string(b)) != "[]" {
		t.Errorf("results.json of no figure = %s, want []", b)
	}
}

// TestTorchNeedNamesThePython: the need of PyTorch names the python that
// GTRAIN_PEER_PYTHON names, and that Debian's packages do not serve it.
func TestTorchNeedNamesThePython(t *testing.T) {
	if got := otherPython(bench.DefaultTorchPython); got != "" {
		t.Errorf("Debian's python: %q", got)
	}
	if got := otherPython("/opt/venv/bin/python3"); !strings.Contains(got, "GTRAIN_PEER_PYTHON=/opt/venv/bin/python3: install torch") {
		t.Errorf("another python: %q", got)
	}
}
