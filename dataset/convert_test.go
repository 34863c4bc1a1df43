package dataset

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const housingPath = "../examples/data/uci_housing/housing.data"

// parseHousing reads the housing file independently of the package code.
func parseHousing(t *testing.T) [][]float32 {
	t.Helper()
	data, err := os.ReadFile(housingPath)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]float32
	for line := range strings.Lines(string(data)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		row := make([]float32, len(fields))
		for i, f := range fields {
			v, err := strconv.ParseFloat(f, 32)
			if err != nil {
				t.Fatal(err)
			}
			row[i] = float32(v)
		}
		rows = append(rows, row)
	}
	return rows
}

func readFiles(t *testing.T, paths []string) []Example {
	t.Helper()
	out, err := ReadAll(paths)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestConvertHousing(t *testing.T) {
	rows := parseHousing(t)
	if len(rows) != 506 {
		t.Fatalf("housing has %d rows, want 506", len(rows))
	}
	dir := filepath.Join(t.TempDir(), "out")
	prefix := filepath.Join(dir, "housing")
	res, err := Convert(ConvertOptions{Format: FormatWhitespace, Input: housingPath, OutPrefix: prefix,
		Shards: 4, TestFraction: 0.2, Normalize: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.TrainRecords != 404 || res.TestRecords != 102 || res.Features != 13 || res.Classes != 0 {
		t.Errorf("result %+v, want 404 train, 102 test, 13 features, regression", res)
	}
	wantTrain := []string{prefix + "-train-00000-of-00004", prefix + "-train-00001-of-00004", prefix + "-train-00002-of-00004", prefix + "-train-00003-of-00004"}
	if !slices.Equal(res.TrainFiles, wantTrain) {
		t.Errorf("train files %v, want %v", res.TrainFiles, wantTrain)
	}
	if res.StatsFile != prefix+"-stats.json" {
		t.Errorf("stats file %q", res.StatsFile)
	}
	assertHousingShards(t, res)

	train := readFiles(t, res.TrainFiles)
	test := readFiles(t, res.TestFiles)
	stats, err := ReadStats(res.StatsFile)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Features != 13 {
		t.Errorf("stats features %d", stats.Features)
	}
	assertStandardised(t, train)
	assertHousingSplit(t, rows, stats, train, test)

	leftovers, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(leftovers) != 0 {
		t.Errorf("temp files left behind: %v", leftovers)
	}
}

// assertHousingShards checks each shard's meta and record count.
func assertHousingShards(t *testing.T, res *ConvertResult) {
	t.Helper()
	for part, files := range map[string][]string{PartTrain: res.TrainFiles, PartTest: res.TestFiles} {
		wantCounts := map[string][]int{PartTrain: {101, 101, 101, 101}, PartTest: {26, 26, 26, 24}}[part]
		var counts []int
		for _, f := range files {
			meta, ix, err := ReadShardMeta(f)
			if err != nil {
				t.Fatal(err)
			}
			if meta.Features != 13 || meta.Classes != 0 || meta.Part != part || !meta.Labels.Known() || meta.Labels.Whole { // house prices such as 21.6
				t.Errorf("%s: meta %+v", f, meta)
			}
			counts = append(counts, ix.Records())
		}
		if !slices.Equal(counts, wantCounts) {
			t.Errorf("%s records per shard %v, want %v", part, counts, wantCounts)
		}
	}
}

// assertStandardised checks that every feature of the normalised train part
// has mean 0 and standard deviation 1.
func assertStandardised(t *testing.T, train []Example) {
	t.Helper()
	for j := range 13 {
		var sum, sumSq float64
		for _, e := range train {
			sum += float64(e.Features[j])
			sumSq += float64(e.Features[j]) * float64(e.Features[j])
		}
		mean := sum / float64(len(train))
		std := math.Sqrt(sumSq/float64(len(train)) - mean*mean)
		if math.Abs(mean) > 1e-5 || math.Abs(std-1) > 1e-4 {
			t.Errorf("feature %d on the normalised train part: mean %g std %g, want 0 and 1", j, mean, std)
		}
	}
}

// assertHousingSplit checks that the split follows the documented
// permutation and each part keeps the original order; labels are not
// normalised, features are (x-mean)/std.
func assertHousingSplit(t *testing.T, rows [][]float32, stats Stats, train, test []Example) {
	t.Helper()
	perm := rand.New(rand.NewPCG(1, 1^0x9e3779b97f4a7c15)).Perm(506)
	testIdx := slices.Sorted(slices.Values(perm[:102]))
	var trainIdx []int
	for i := range 506 {
		if !slices.Contains(testIdx, i) {
			trainIdx = append(trainIdx, i)
		}
	}
	check := func(part string, got []Example, idx []int) {
		for k, i := range idx {
			if got[k].Label != rows[i][13] {
				t.Fatalf("%s record %d: label %v, want row %d's %v", part, k, got[k].Label, i, rows[i][13])
			}
			for j := range 13 {
				want := (float64(rows[i][j]) - stats.Mean[j]) / stats.Std[j]
				if math.Abs(float64(got[k].Features[j])-want) > 1e-5 {
					t.Fatalf("%s record %d feature %d: %v, want %v", part, k, j, got[k].Features[j], want)
				}
			}
		}
	}
	check(PartTrain, train, trainIdx)
	check(PartTest, test, testIdx)
}

func TestConvertIsDeterministic(t *testing.T) {
	opts := ConvertOptions{Format: FormatWhitespace, Input: housingPath, Shards: 3, TestFraction: 0.1, Seed: 7, Normalize: true, ChunkRecords: 5}
	a, b := t.TempDir(), t.TempDir()
	opts.OutPrefix = filepath.Join(a, "h")
	if _, err := Convert(opts); err != nil {
		t.Fatal(err)
	}
	opts.OutPrefix = filepath.Join(b, "h")
	if _, err := Convert(opts); err != nil {
		t.Fatal(err)
	}
	assertSameFiles(t, a, b)

	// A different seed gives a different split.
	opts.Seed = 8
	opts.OutPrefix = filepath.Join(t.TempDir(), "h")
	res, err := Convert(opts)
	if err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(filepath.Join(a, "h-test-00000-of-00003"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.ReadFile(res.TestFiles[0])
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(first, other) {
		t.Error("seeds 7 and 8 gave the same test shard")
	}
}

// assertSameFiles checks that two directories hold the same names with the same bytes.
func assertSameFiles(t *testing.T, a, b string) {
	t.Helper()
	entries, err := os.ReadDir(a)
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.ReadDir(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(other) || len(entries) == 0 {
		t.Fatalf("%s has %d files, %s has %d", a, len(entries), b, len(other))
	}
	for _, e := range entries {
		x, err := os.ReadFile(filepath.Join(a, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between the two conversions", e.Name())
		}
	}
}

func TestCSVAndWhitespaceAgree(t *testing.T) {
	rows := parseHousing(t)
	tmp := t.TempDir()
	var csv strings.Builder
	raw, err := os.ReadFile(housingPath)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(raw)) {
		csv.WriteString(strings.Join(strings.Fields(line), " , ") + "\r\n")
	}
	csvPath := filepath.Join(tmp, "housing.csv")
	if err := os.WriteFile(csvPath, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	opts := ConvertOptions{Shards: 2, TestFraction: 0.25, Normalize: true}
	opts.Format, opts.Input, opts.OutPrefix = FormatWhitespace, housingPath, filepath.Join(a, "h")
	if _, err := Convert(opts); err != nil {
		t.Fatal(err)
	}
	opts.Format, opts.Input, opts.OutPrefix = FormatCSV, csvPath, filepath.Join(b, "h")
	res, err := Convert(opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.TrainRecords+res.TestRecords != len(rows) {
		t.Errorf("csv gave %d records, want %d", res.TrainRecords+res.TestRecords, len(rows))
	}
	assertSameFiles(t, a, b)
}

func TestConvertWithoutTestPart(t *testing.T) {
	dir := t.TempDir()
	res, err := Convert(ConvertOptions{Format: FormatWhitespace, Input: housingPath, OutPrefix: filepath.Join(dir, "h"), Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.TestRecords != 0 || res.TestFiles != nil || res.StatsFile != "" || res.TrainRecords != 506 {
		t.Errorf("result %+v, want all 506 records in train, no test files, no stats", res)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "h-test-*")); len(m) != 0 {
		t.Errorf("test files written: %v", m)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "h-stats.json")); len(m) != 0 {
		t.Errorf("stats written without Normalize")
	}
	// Without normalisation the features are the input values.
	rows := parseHousing(t)
	got := readFiles(t, res.TrainFiles)
	for i, e := range got {
		if !slices.Equal(e.Features, rows[i][:13]) || e.Label != rows[i][13] {
			t.Fatalf("record %d = %v, want row %v", i, e, rows[i])
		}
	}
}

func TestConvertRefusesMoreShardsThanRecords(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "two.txt")
	if err := os.WriteFile(input, []byte("1 2\n3 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Convert(ConvertOptions{Format: FormatWhitespace, Input: input, OutPrefix: filepath.Join(dir, "o", "t"), Shards: 4})
	if !errors.Is(err, ErrBadOptions) || !strings.Contains(err.Error(), "at most --shards 2") {
		t.Fatalf("4 shards for 2 records: err = %v, want ErrBadOptions saying at most 2 shards", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "o")); !os.IsNotExist(err) {
		t.Errorf("the refused conversion created its output directory (stat: %v)", err)
	}
}

func TestShardRuns(t *testing.T) {
	tests := []struct {
		n, shards int
		want      []int
	}{
		{404, 4, []int{101, 101, 101, 101}},
		{102, 4, []int{26, 26, 26, 24}},
		{10, 4, []int{3, 3, 3, 1}},
		{9, 4, []int{3, 2, 2, 2}}, // ceil runs would leave the last shard empty
		{5, 4, []int{2, 1, 1, 1}},
		{2, 4, []int{1, 1, 0, 0}},
		{7, 1, []int{7}},
	}
	for _, tt := range tests {
		runs := shardRuns(tt.n, tt.shards)
		var sizes []int
		next := 0
		for _, r := range runs {
			if r[0] != next {
				t.Errorf("shardRuns(%d, %d) = %v: not contiguous", tt.n, tt.shards, runs)
			}
			sizes = append(sizes, r[1]-r[0])
			next = r[1]
		}
		if next != tt.n || !slices.Equal(sizes, tt.want) {
			t.Errorf("shardRuns(%d, %d) sizes %v, want %v", tt.n, tt.shards, sizes, tt.want)
		}
	}
}

func TestTestCount(t *testing.T) {
	tests := []struct {
		fraction float64
		n, want  int
	}{
		{0.2, 506, 102}, {0, 506, 0}, {0.3, 10, 3}, {0.25, 10, 3}, {0.5, 3, 2}, {0.1, 1, 1}, {0.7, 10, 7},
	}
	for _, tt := range tests {
		if got := testCount(tt.fraction, tt.n); got != tt.want {
			t.Errorf("testCount(%v, %d) = %d, want %d", tt.fraction, tt.n, got, tt.want)
		}
	}
}

func TestConvertRejectsBadInput(t *testing.T) {
	tests := []struct {
		name, format, text string
		classes            int
		want               error
		mention            []string
	}{
		{"bad token", FormatWhitespace, "1 2 3\n4 x 6\n", 0, ErrBadLine, []string{":2:", `"x"`, "column 2"}},
		{"column count", FormatWhitespace, "1 2 3\n\n4 5\n", 0, ErrBadLine, []string{":3:", "2 columns, want 3"}},
		{"empty csv value", FormatCSV, "1,2,3\n4,,6\n", 0, ErrBadLine, []string{":2:", "column 2: empty"}},
		{"trailing comma", FormatCSV, "1,2,\n", 0, ErrBadLine, []string{":1:", "column 3: empty"}},
		{"nan", FormatWhitespace, "1 NaN\n", 0, ErrBadLine, []string{":1:", `"NaN"`}},
		{"out of float32 range", FormatWhitespace, "1 1e300\n", 0, ErrBadLine, []string{":1:", `"1e300"`}},
		{"label only", FormatWhitespace, "5\n", 0, ErrBadLine, []string{":1:", "at least one feature"}},
		{"csv read as whitespace", FormatWhitespace, "1,2\n", 0, ErrBadLine, []string{":1:"}},
		{"only blank lines", FormatWhitespace, "\n  \n\t\n", 0, ErrNoRecords, nil},
		{"label beyond classes", FormatWhitespace, "1 0\n2 1\n\n3 2\n", 2, ErrBadLabel, []string{":4:", "label 2"}},
		{"all records to test", FormatWhitespace, "1 0\n2 1\n", 0, ErrNoRecords, []string{"leaves none"}},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-"))
			if err := os.WriteFile(input, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			opts := ConvertOptions{Format: tt.format, Input: input, OutPrefix: filepath.Join(dir, "out", "x"), Shards: 1, Classes: tt.classes}
			if tt.name == "all records to test" {
				opts.TestFraction = 0.9
			}
			_, err := Convert(opts)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Convert = %v, want %v", err, tt.want)
			}
			if tt.want != ErrNoRecords && !strings.Contains(err.Error(), input) {
				t.Errorf("error %q does not name the input file", err)
			}
			for _, m := range tt.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
		})
	}
}

func TestConvertClassificationText(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "c.csv")
	if err := os.WriteFile(input, []byte("0.5, 1\n0.25, 0\n1, 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Convert(ConvertOptions{Format: FormatCSV, Input: input, OutPrefix: filepath.Join(dir, "c"), Shards: 1, Classes: 3})
	if err != nil {
		t.Fatal(err)
	}
	meta, _, err := ReadShardMeta(res.TrainFiles[0])
	if err != nil {
		t.Fatal(err)
	}
	if meta.Classes != 3 || res.Classes != 3 {
		t.Errorf("classes: meta %d, result %d; want 3", meta.Classes, res.Classes)
	}
}

func TestConvertRejectsBadOptions(t *testing.T) {
	good := ConvertOptions{Format: FormatWhitespace, Input: housingPath, OutPrefix: filepath.Join(t.TempDir(), "h"), Shards: 1}
	tests := []struct {
		name   string
		change func(*ConvertOptions)
	}{
		{"unknown format", func(o *ConvertOptions) { o.Format = "parquet" }},
		{"no input", func(o *ConvertOptions) { o.Input = "" }},
		{"labels with text", func(o *ConvertOptions) { o.Labels = "l" }},
		{"idx without labels", func(o *ConvertOptions) { o.Format = FormatIDX }},
		{"no prefix", func(o *ConvertOptions) { o.OutPrefix = "" }},
		{"directory only", func(o *ConvertOptions) { o.OutPrefix = "out/" }},
		{"zero shards", func(o *ConvertOptions) { o.Shards = 0 }},
		{"test fraction 1", func(o *ConvertOptions) { o.TestFraction = 1 }},
		{"negative test fraction", func(o *ConvertOptions) { o.TestFraction = -0.1 }},
		{"NaN test fraction", func(o *ConvertOptions) { o.TestFraction = math.NaN() }},
		{"negative chunk records", func(o *ConvertOptions) { o.ChunkRecords = -1 }},
		{"negative classes", func(o *ConvertOptions) { o.Classes = -1 }},
	}
	for _, tt := range tests {
		opts := good
		tt.change(&opts)
		if _, err := Convert(opts); !errors.Is(err, ErrBadOptions) {
			t.Errorf("%s: Convert = %v, want ErrBadOptions", tt.name, err)
		}
	}
	missing := good
	missing.Input = filepath.Join(t.TempDir(), "missing")
	if _, err := Convert(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing input: %v, want os.ErrNotExist", err)
	}
}
