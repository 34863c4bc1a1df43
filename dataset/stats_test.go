package dataset

import (
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestConvertStatsAppliesTrainingStatistics converts housing as a training
// set with Normalize, then the same file as a separate test set with Stats:
// the test records are scaled with the training statistics (not their own),
// written as PREFIX-test-* only, and the statistics file is left as it was.
func TestConvertStatsAppliesTrainingStatistics(t *testing.T) {
	rows := parseHousing(t)
	dir := t.TempDir()
	train, err := Convert(ConvertOptions{Format: FormatWhitespace, Input: housingPath, OutPrefix: filepath.Join(dir, "housing"),
		Shards: 2, TestFraction: 0.5, Normalize: true})
	if err != nil {
		t.Fatal(err)
	}
	stats, err := ReadStats(train.StatsFile)
	if err != nil {
		t.Fatal(err)
	}
	test, err := Convert(ConvertOptions{Format: FormatWhitespace, Input: housingPath, OutPrefix: filepath.Join(dir, "separate"),
		Shards: 3, Part: PartTest, Stats: train.StatsFile})
	if err != nil {
		t.Fatal(err)
	}
	if len(test.TrainFiles) != 0 || len(test.TestFiles) != 3 || test.TestRecords != 506 || test.StatsFile != train.StatsFile {
		t.Fatalf("result %+v, want 506 records in 3 test shards only, stats %s", test, train.StatsFile)
	}
	if !strings.Contains(test.TestFiles[0], "separate-test-00000-of-00003") {
		t.Errorf("test file %s, want PREFIX-test-00000-of-00003", test.TestFiles[0])
	}
	if m, _, err := ReadShardMeta(test.TestFiles[0]); err != nil || m.Part != PartTest {
		t.Errorf("meta %+v, %v: want part test", m, err)
	}
	got := readFiles(t, test.TestFiles)
	for i, e := range got {
		for j := range 13 {
			want := (float64(rows[i][j]) - stats.Mean[j]) / stats.Std[j]
			if math.Abs(float64(e.Features[j])-want) > 1e-5 {
				t.Fatalf("record %d feature %d: %v, want %v (training statistics)", i, j, e.Features[j], want)
			}
		}
	}
	if again, _ := ReadStats(train.StatsFile); !slices.Equal(again.Mean, stats.Mean) {
		t.Errorf("the statistics file changed")
	}
}

// TestConvertStatsRejects: statistics of another width, a file that is not
// statistics, values that cannot scale, and option combinations that make no
// sense are refused with their own sentinel, naming the problem.
func TestConvertStatsRejects(t *testing.T) {
	dir := t.TempDir()
	images, labels := tinyIDX() // 6 features
	img, lbl := writeFile(t, dir, "i", images), writeFile(t, dir, "l", labels)
	statsFile := func(s any) string {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return writeFile(t, dir, "stats.json", b)
	}
	base := ConvertOptions{Format: FormatIDX, Input: img, Labels: lbl, OutPrefix: filepath.Join(dir, "o"), Shards: 1}
	cases := []struct {
		name    string
		opts    func(o *ConvertOptions)
		want    error
		mention string
	}{
		{"width", func(o *ConvertOptions) {
			o.Stats = statsFile(Stats{Features: 13, Mean: make([]float64, 13), Std: make([]float64, 13)})
		}, ErrStatsMismatch, "13 features, the input records have 6"},
		{"not json", func(o *ConvertOptions) { o.Stats = writeFile(t, dir, "x", []byte("mean: 1")) }, ErrBadStats, "not a statistics file"},
		{"short", func(o *ConvertOptions) {
			o.Stats = statsFile(Stats{Features: 6, Mean: make([]float64, 5), Std: make([]float64, 6)})
		}, ErrBadStats, "5 means"},
		{"negative std", func(o *ConvertOptions) {
			o.Stats = statsFile(map[string]any{"features": 1, "mean": []float64{0}, "std": []float64{-1}})
		}, ErrBadStats, "std -1"},
		{"both", func(o *ConvertOptions) { o.Stats, o.Normalize = "s.json", true }, ErrBadOptions, "choose one"},
		{"test part normalize", func(o *ConvertOptions) { o.Part, o.Normalize = PartTest, true }, ErrBadOptions, "training set"},
		{"test part fraction", func(o *ConvertOptions) { o.Part, o.TestFraction = PartTest, 0.2 }, ErrBadOptions, "test fraction"},
		{"unknown part", func(o *ConvertOptions) { o.Part = "validation" }, ErrBadOptions, `"validation"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := base
			c.opts(&o)
			_, err := Convert(o)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.mention) {
				t.Errorf("Convert = %v, want %v mentioning %q", err, c.want, c.mention)
			}
		})
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "o-*"))
	if len(matches) != 0 {
		t.Errorf("a refused conversion wrote %v", matches)
	}
}
