package dataset

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func convertHousing(t *testing.T, prefix string, shards int, replace bool) (*ConvertResult, error) {
	t.Helper()
	return Convert(ConvertOptions{Format: FormatWhitespace, Input: housingPath, OutPrefix: prefix,
		Shards: shards, TestFraction: 0.2, Replace: replace})
}

func TestConvertRefusesAnotherSetAndReplacesIt(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "housing")
	first, err := convertHousing(t, prefix, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = convertHousing(t, prefix, 2, false)
	if !errors.Is(err, ErrOtherSet) || !strings.Contains(err.Error(), "housing-train-*-of-00004 (4 files)") || !strings.Contains(err.Error(), "--replace") {
		t.Fatalf("second convert with another count: err = %v, want ErrOtherSet naming the old set and --replace", err)
	}
	for _, f := range append(first.TrainFiles, first.TestFiles...) {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("the refused convert lost %s: %v", f, err)
		}
	}
	if _, err := os.Stat(ShardPath(prefix, PartTrain, 0, 2)); !os.IsNotExist(err) {
		t.Errorf("the refused convert wrote a shard of the new set (stat: %v)", err)
	}
	res, err := convertHousing(t, prefix, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(first.TrainFiles), first.TestFiles...)
	slices.Sort(want)
	got := slices.Sorted(slices.Values(res.Replaced))
	if !slices.Equal(got, want) {
		t.Errorf("replaced %v, want the old set %v", res.Replaced, want)
	}
	left, _ := filepath.Glob(prefix + "-*-of-*")
	if len(left) != 4 {
		t.Errorf("after --replace the prefix holds %v, want the 2 train and 2 test shards of the new set", left)
	}
}

func TestParseShardName(t *testing.T) {
	set, of, ok := ParseShardName("/d/housing-train-00003-of-00004")
	if !ok || set != "/d/housing-train" || of != 4 {
		t.Errorf("ParseShardName = %q, %d, %v; want /d/housing-train, 4, true", set, of, ok)
	}
	if _, _, ok := ParseShardName("/d/housing.data"); ok {
		t.Error("a file not named by ShardPath parsed as a shard")
	}
}

func TestClassWarningNamesEmptyClasses(t *testing.T) {
	o := ConvertOptions{Format: FormatIDX, Labels: "labels.idx"}
	examples := []Example{{Label: 0}, {Label: 1}, {Label: 200}}
	if w := classWarning(o, examples, 201); !strings.Contains(w, "201 classes") || !strings.Contains(w, "198 of the classes") || !strings.Contains(w, "--classes") {
		t.Errorf("warning %q, want 201 classes, 198 empty and --classes", w)
	}
	o.Classes = 201 // stated: no warning
	if w := classWarning(o, examples, 201); w != "" {
		t.Errorf("stated classes still warn: %q", w)
	}
}
