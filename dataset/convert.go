package dataset

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/gtrain/gtrain/internal/atomicfile"
)

// ConvertOptions says what to convert and how; zero values get the defaults
// noted per field.
type ConvertOptions struct {
	Format       string  // FormatWhitespace | FormatCSV | FormatTSV | FormatIDX | FormatMovieLens
	Input        string  // text file; for idx: the images idx file (idx3-ubyte, u8 pixels scaled to [0,1]); for movielens: the directory
	Labels       string  // idx only: labels idx1-ubyte file
	Columns      string  // text only: a column spec (see specEntry); empty: the last column is the label, the others features
	Header       bool    // text only: the first non-blank line names the columns (and is no record)
	OutPrefix    string  // DIR/PREFIX; DIR is created
	Shards       int     // >= 1
	TestFraction float64 // in [0,1); default 0
	Seed         uint64  // 0 means the default, 1
	Normalize    bool    // scale features with statistics of the train part, written beside the shards
	Stats        string  // a statistics file (written by Normalize) to scale with instead; excludes Normalize
	Part         string  // PartTrain (default): split by TestFraction; PartTest: every record is a test record
	ChunkRecords int     // records per chunk; 0 -> DefaultChunkRecords
	Classes      int     // 0 = infer: idx -> max(10, max label+1); text -> 0 (regression)
	// Replace removes the shards of PREFIX-PART with another shard count
	// (after the new ones are written); without it Convert refuses to write
	// beside them (ErrOtherSet).
	Replace bool
}

// ConvertResult says what Convert wrote.
type ConvertResult struct {
	TrainFiles, TestFiles     []string
	TrainRecords, TestRecords int
	Features                  int
	Classes                   int
	IDFields                  []IDField // the records' id fields (none for a dense input)
	StatsFile                 string    // empty without Normalize
	Replaced                  []string  // shards of another count removed (Replace)
	Warnings                  []string  // what the operator should look at, e.g. classes without records
}

// Convert reads raw data, splits it into train and test parts, optionally
// normalises the features (with train-part statistics, or with Stats read
// from a file), and writes the parts as shards PREFIX-train-00000-of-0000N...
// The output depends only on the input and the options.
func Convert(opts ConvertOptions) (*ConvertResult, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	examples, classes, fields, err := readInput(o)
	if err != nil {
		return nil, err
	}
	features := len(examples[0].Features)
	if features == 0 && (o.Normalize || o.Stats != "") {
		return nil, fmt.Errorf("%w: the records have no dense features to normalise", ErrBadOptions)
	}
	train, test, err := o.parts(examples)
	if err != nil {
		return nil, err
	}
	res := &ConvertResult{TrainRecords: len(train), TestRecords: len(test), Features: features, Classes: classes, IDFields: fields}
	if w := classWarning(o, examples, classes); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	stale, err := o.checkOutput(train, test)
	if err != nil {
		return nil, err
	}
	computed, err := o.normalise(train, test, features)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(o.OutPrefix), 0o755); err != nil {
		return nil, fmt.Errorf("dataset: creating output directory: %w", err)
	}
	meta := ShardMeta{Features: features, Classes: classes, IDFields: fields}
	if res.TrainFiles, err = writePart(o, PartTrain, train, meta); err != nil {
		return nil, err
	}
	if res.TestFiles, err = writePart(o, PartTest, test, meta); err != nil {
		return nil, err
	}
	if err := removeFiles(stale); err != nil {
		return nil, err
	}
	res.Replaced = stale
	res.StatsFile = o.Stats
	if o.Normalize {
		res.StatsFile = StatsPath(o.OutPrefix)
		if err := writeStats(res.StatsFile, computed); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// parts splits the records as o says: all of them into o.Part, or a seeded
// TestFraction into the test part and the rest into the train part.
func (o ConvertOptions) parts(examples []Example) (train, test []Example, err error) {
	if o.Part == PartTest {
		return nil, examples, nil
	}
	train, test = split(examples, testCount(o.TestFraction, len(examples)), o.Seed)
	if len(train) == 0 {
		return nil, nil, fmt.Errorf("%w: test fraction %v of %d records leaves none for training", ErrNoRecords, o.TestFraction, len(examples))
	}
	return train, test, nil
}

// checkOutput runs before anything is written: every shard must get a
// record, and the prefix may not hold a set of another shard count (unless
// Replace: then it returns that set's files, to remove once the new set is
// written).
func (o ConvertOptions) checkOutput(train, test []Example) ([]string, error) {
	var parts []string
	for _, p := range []struct {
		name string
		n    int
	}{{PartTrain, len(train)}, {PartTest, len(test)}} {
		if p.n == 0 {
			continue
		}
		if o.Shards > p.n {
			return nil, fmt.Errorf("%w: %d shards for the %d records of the %s part would leave %d shards empty: use at most --shards %d",
				ErrBadOptions, o.Shards, p.n, p.name, o.Shards-p.n, p.n)
		}
		parts = append(parts, p.name)
	}
	return checkOtherSets(o, parts)
}

// normalise scales both parts in place: with o.Stats read from its file, or
// (Normalize) with statistics of the train part, which it returns to be
// written beside the shards.
func (o ConvertOptions) normalise(train, test []Example, features int) (computed Stats, err error) {
	var stats Stats
	switch {
	case o.Stats != "":
		if stats, err = ReadStats(o.Stats); err != nil {
			return Stats{}, err
		}
		if err := stats.check(o.Stats, features); err != nil {
			return Stats{}, err
		}
	case o.Normalize:
		stats = computeStats(train, features)
		computed = stats
	default:
		return Stats{}, nil
	}
	stats.Apply(train)
	stats.Apply(test)
	return computed, nil
}

func writeStats(path string, stats Stats) error {
	data, err := json.Marshal(stats)
	if err != nil {
		return fmt.Errorf("dataset: encoding stats: %w", err)
	}
	if err := atomicfile.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("dataset: writing %s: %w", path, err)
	}
	return nil
}

func (o ConvertOptions) withDefaults() (ConvertOptions, error) {
	bad := func(format string, args ...any) (ConvertOptions, error) {
		return ConvertOptions{}, fmt.Errorf("%w: %s", ErrBadOptions, fmt.Sprintf(format, args...))
	}
	switch o.Format {
	case FormatWhitespace, FormatCSV, FormatTSV:
		if o.Labels != "" {
			return bad("labels file %q is only used with format %q", o.Labels, FormatIDX)
		}
	case FormatIDX:
		if o.Labels == "" {
			return bad("format %q needs a labels file", FormatIDX)
		}
	case FormatMovieLens:
		if o.Labels != "" || o.Normalize || o.Stats != "" {
			return bad("format %q takes no labels file and no normalisation: its records have no dense features", FormatMovieLens)
		}
	default:
		return bad("format %q, want %q, %q, %q, %q or %q", o.Format, FormatWhitespace, FormatCSV, FormatTSV, FormatIDX, FormatMovieLens)
	}
	if (o.Columns != "" || o.Header) && (o.Format == FormatIDX || o.Format == FormatMovieLens) {
		return bad("a column spec and a header row are for text formats (%q, %q, %q), not %q", FormatWhitespace, FormatCSV, FormatTSV, o.Format)
	}
	if o.Input == "" {
		return bad("no input file given")
	}
	if base := filepath.Base(o.OutPrefix); o.OutPrefix == "" || strings.HasSuffix(o.OutPrefix, string(filepath.Separator)) || base == "." || base == ".." {
		return bad("output %q must be DIR/PREFIX with a file-name prefix", o.OutPrefix)
	}
	if o.Shards < 1 {
		return bad("shards is %d, must be at least 1", o.Shards)
	}
	if !(o.TestFraction >= 0 && o.TestFraction < 1) {
		return bad("test fraction %v, must be in [0, 1)", o.TestFraction)
	}
	if o.ChunkRecords < 0 {
		return bad("chunk records is %d, must be at least 1 (or 0 for %d)", o.ChunkRecords, DefaultChunkRecords)
	}
	if o.ChunkRecords == 0 {
		o.ChunkRecords = DefaultChunkRecords
	}
	if o.Classes < 0 {
		return bad("classes is %d, must be 0 (infer) or more", o.Classes)
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o.withPart()
}

// withPart checks Part and the normalisation options, which depend on it:
// statistics come from training data only, so a test part needs Stats.
func (o ConvertOptions) withPart() (ConvertOptions, error) {
	bad := func(format string, args ...any) (ConvertOptions, error) {
		return ConvertOptions{}, fmt.Errorf("%w: %s", ErrBadOptions, fmt.Sprintf(format, args...))
	}
	if o.Part == "" {
		o.Part = PartTrain
	}
	switch {
	case o.Part != PartTrain && o.Part != PartTest:
		return bad("part %q, want %q or %q", o.Part, PartTrain, PartTest)
	case o.Normalize && o.Stats != "":
		return bad("normalize computes statistics from this input and stats %q applies existing ones: choose one", o.Stats)
	case o.Part == PartTest && o.Normalize:
		return bad("part %q with normalize: statistics come from a training set; apply the training set's with stats FILE", PartTest)
	case o.Part == PartTest && o.TestFraction != 0:
		return bad("part %q writes every record as a test record; test fraction %v splits a training input", PartTest, o.TestFraction)
	}
	return o, nil
}

// readInput returns the records, the number of classes (0 = regression),
// with every label checked against it, and the records' id fields.
func readInput(o ConvertOptions) ([]Example, int, []IDField, error) {
	switch o.Format {
	case FormatIDX:
		examples, classes, err := readIDXInput(o)
		return examples, classes, nil, err
	case FormatMovieLens:
		examples, err := readMovieLens(o.Input)
		if err != nil {
			return nil, 0, nil, err
		}
		return examples, o.Classes, MovieLensFields, checkLabels(examples, o.Classes, func(i int) string {
			return fmt.Sprintf("%s record %d", filepath.Join(o.Input, MovieLensRatings), i+1)
		})
	}
	in := textInput{format: o.Format, header: o.Header}
	if o.Columns != "" {
		var err error
		if in.spec, err = parseColumnSpec(o.Columns); err != nil {
			return nil, 0, nil, err
		}
	}
	examples, lines, fields, err := readText(o.Input, in)
	if err != nil {
		return nil, 0, nil, err
	}
	return examples, o.Classes, fields, checkLabels(examples, o.Classes, func(i int) string {
		return fmt.Sprintf("%s:%d", o.Input, lines[i])
	})
}

// checkLabels checks every label against classes; where names record i.
func checkLabels(examples []Example, classes int, where func(i int) string) error {
	meta := ShardMeta{Classes: classes}
	for i, e := range examples {
		if err := meta.checkLabel(e.Label); err != nil {
			return fmt.Errorf("%s: %w", where(i), err)
		}
	}
	return nil
}

// readIDXInput reads images and labels; classes default to max(10, the
// largest label + 1).
func readIDXInput(o ConvertOptions) ([]Example, int, error) {
	examples, err := readIDX(o.Input, o.Labels)
	if err != nil {
		return nil, 0, err
	}
	classes := o.Classes
	if classes == 0 {
		classes = 10
		for _, e := range examples {
			classes = max(classes, int(e.Label)+1)
		}
	}
	return examples, classes, checkLabels(examples, classes, func(i int) string {
		return fmt.Sprintf("%s: item %d", o.Labels, i)
	})
}

// testCount is ceil(fraction*n), except that a product within rounding error
// of an integer counts as that integer (0.3*10 is 3.0000000000000004 in
// float64, and a user asking for 30% of 10 records means 3).
func testCount(fraction float64, n int) int {
	x := fraction * float64(n)
	if r := math.Round(x); math.Abs(x-r) <= 1e-9*math.Max(1, x) {
		return int(r)
	}
	return int(math.Ceil(x))
}

// split puts the first nTest indices of a seeded permutation in the test part
// and the rest in the train part, each kept in the original order.
func split(examples []Example, nTest int, seed uint64) (train, test []Example) {
	isTest := testMask(len(examples), nTest, seed)
	for i, e := range examples {
		if isTest[i] {
			test = append(test, e)
		} else {
			train = append(train, e)
		}
	}
	return train, test
}

// testMask marks the records split puts in the test part.
func testMask(n, nTest int, seed uint64) []bool {
	perm := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)).Perm(n)
	isTest := make([]bool, n)
	for _, i := range perm[:nTest] {
		isTest[i] = true
	}
	return isTest
}

// shardRuns deals n records to shards in contiguous runs of ceil(n/shards),
// shard 0 first. Where that would leave a shard empty although there are at
// least as many records as shards (n=9 into 4 shards: 3,3,3,0), the runs are
// balanced instead (3,2,2,2): no shard is empty unless there are fewer records
// than shards.
func shardRuns(n, shards int) [][2]int {
	runs := make([][2]int, shards)
	run := (n + shards - 1) / shards
	if n >= shards && run*(shards-1) >= n {
		base, extra := n/shards, n%shards
		start := 0
		for s := range runs {
			size := base
			if s < extra {
				size++
			}
			runs[s] = [2]int{start, start + size}
			start += size
		}
		return runs
	}
	for s := range runs {
		runs[s] = [2]int{min(s*run, n), min((s+1)*run, n)}
	}
	return runs
}

// ShardPath names shard i of a part: PREFIX-PART-00000-of-0000N.
func ShardPath(outPrefix, part string, i, shards int) string {
	return fmt.Sprintf("%s-%s-%05d-of-%05d", outPrefix, part, i, shards)
}

// writePart writes nothing for an empty part.
func writePart(o ConvertOptions, part string, examples []Example, meta ShardMeta) ([]string, error) {
	if len(examples) == 0 {
		return nil, nil
	}
	meta.Part = part
	var files []string
	for i, r := range shardRuns(len(examples), o.Shards) {
		path := ShardPath(o.OutPrefix, part, i, o.Shards)
		if err := WriteShard(path, meta, examples[r[0]:r[1]], o.ChunkRecords); err != nil {
			return nil, err
		}
		files = append(files, path)
	}
	return files, nil
}
