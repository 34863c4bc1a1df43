package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/dataset"
)

// TestExportRecords: the peer's file holds every record of the shards, in
// shard order, with its label and each id field's ids.
func TestExportRecords(t *testing.T) {
	dir := t.TempDir()
	raw := filepath.Join(dir, "raw")
	if _, err := dataset.SynthMovieLens(dataset.SynthOptions{Dir: raw, Users: 20, Movies: 10, Ratings: 60, Dim: 2, Noise: 0.1, Seed: 1, TestFraction: 0.2, SplitSeed: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := dataset.Convert(dataset.ConvertOptions{Format: dataset.FormatMovieLens, Input: raw, OutPrefix: filepath.Join(dir, "ml"), Shards: 2, TestFraction: 0.2, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	glob := filepath.Join(dir, "ml-train-*")
	fields, err := exportRecords(glob, filepath.Join(dir, "train.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(fields, ",") != "user,movie,gender,age,occupation,zip,genres" {
		t.Errorf("fields %v; want MovieLens's seven", fields)
	}
	paths, _ := filepath.Glob(glob)
	want, err := dataset.ReadAll(paths)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "train.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != len(want) || len(want) != 48 {
		t.Fatalf("%d lines for %d records; want 48 (60 ratings less a fifth)", len(lines), len(want))
	}
	for r, line := range lines {
		cells := strings.Split(line, "\t")
		label, err := strconv.ParseFloat(cells[0], 32)
		if err != nil || float32(label) != want[r].Label || len(cells) != 1+len(fields) {
			t.Fatalf("line %d %q; want label %v and %d fields", r, line, want[r].Label, len(fields))
		}
		for f, ids := range want[r].IDs {
			var s []string
			for _, id := range ids {
				s = append(s, strconv.FormatUint(id, 10))
			}
			if cells[1+f] != strings.Join(s, ",") {
				t.Errorf("line %d field %s: %q; want %q", r, fields[f], cells[1+f], strings.Join(s, ","))
			}
		}
	}
}
