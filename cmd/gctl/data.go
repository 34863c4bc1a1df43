package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gtrain/gtrain/cmd/gctl/internal/render"
	"github.com/gtrain/gtrain/dataset"
)

// Input formats of `data convert` (docs/reference.md#record-shards).
var convertFormats = []string{dataset.FormatWhitespace, dataset.FormatCSV, dataset.FormatTSV, dataset.FormatIDX, dataset.FormatMovieLens}

func (a *app) dataCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "data",
		Short: "Prepare training data",
	}
	asGroup(cmd)
	cmd.AddCommand(a.dataConvertCommand(), a.dataSynthCommand())
	return cmd
}

// convertOutput is `data convert -o json`.
type convertOutput struct {
	TrainFiles   []string `json:"train_files"`
	TestFiles    []string `json:"test_files"`
	TrainRecords int      `json:"train_records"`
	TestRecords  int      `json:"test_records"`
	Features     int      `json:"features"`
	Classes      int      `json:"classes"`
	IDFields     []string `json:"id_fields"` // names of the records' id fields; empty for dense data
	StatsFile    string   `json:"stats_file"`
	Replaced     []string `json:"replaced"` // shards of another count removed by --replace
	Warnings     []string `json:"warnings"`
	statsGiven   bool     // StatsFile was --stats (applied), not written by --normalize
}

func (a *app) dataConvertCommand() *cobra.Command {
	var opts dataset.ConvertOptions
	cmd := &cobra.Command{
		Use:   "convert --format whitespace|csv|tsv|idx|movielens --input F [--labels F] [--columns SPEC] [--header] --out DIR/PREFIX --shards N",
		Short: "Turn raw data into record shards",
		Long: `Convert raw data into chunked, checksummed record shards (docs/reference.md#record-shards):
PREFIX-train-00000-of-0000N, ... and, with --test-fraction, PREFIX-test-....

Formats: whitespace, csv or tsv (one record per line; by default every column a
number and the last the label, UCI housing is whitespace; --columns says which
columns are the label, dense features and id fields, e.g.
--columns label=4,id:user=1,hash:item=2,dense=5-7, see
docs/reference.md#text-columns; --header skips a first row of column names,
which --columns may then use) and idx (MNIST-style: --input the images file,
--labels the labels file) and movielens (--input a directory holding ml-1m's
ratings.dat, users.dat and movies.dat, "::"-separated: one record per rating in
the file's order, label the rating, id fields user, movie, gender, age,
occupation, zip and genres; see docs/reference.md#movielens-records).
Gzip-compressed inputs are read directly (recognised
by their first bytes; a file named .gz that is not gzip is refused). Records are
shuffled with --seed before the split.

--normalize scales each feature column with statistics of the training part
only and stores them beside the shards as PREFIX-stats.json. --stats FILE
applies such a file instead of computing statistics, so that a separate test
set is scaled exactly like its training set.

--part test writes every input record as the test part (PREFIX-test-*): use it
for a separately distributed test set (MNIST's t10k files), with the training
set's --stats when the training set was normalised. The default, --part train,
writes the training part and, with --test-fraction, a test part cut from it.
The output directory is created. A prefix that already holds shards of
another --shards count is refused (a glob would train on both sets) unless
--replace, which removes the old set once the new one is written. More shards
than records is refused: every shard holds at least one record.

This command runs locally; it does not contact the agent.
With -o json: {"train_files", "test_files", "train_records", "test_records",
"features", "classes", "id_fields", "stats_file", "replaced", "warnings"}; stats_file is the statistics written
(--normalize) or applied (--stats), empty without either.`,
		Example: `  gctl data convert --format whitespace --input housing.data --out data/housing --shards 4 --test-fraction 0.2 --normalize
  gctl data convert --format idx --input train-images-idx3-ubyte.gz --labels train-labels-idx1-ubyte.gz \
    --out data/fashion --shards 8 --normalize
  gctl data convert --format idx --input t10k-images-idx3-ubyte.gz --labels t10k-labels-idx1-ubyte.gz \
    --out data/fashion --shards 2 --part test --stats data/fashion-stats.json`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkConvertOptions(opts); err != nil {
				return err
			}
			res, err := dataset.Convert(opts)
			if errors.Is(err, fs.ErrNotExist) {
				return usagef("data convert: %v: give existing files with --input/--labels/--stats", err)
			}
			if err != nil {
				return fmt.Errorf("data convert %s: %w", opts.Input, err)
			}
			out := convertOutput{
				TrainFiles:   render.NonNil(res.TrainFiles),
				TestFiles:    render.NonNil(res.TestFiles),
				TrainRecords: res.TrainRecords,
				TestRecords:  res.TestRecords,
				Features:     res.Features,
				Classes:      res.Classes,
				IDFields:     render.NonNil(dataset.ShardMeta{IDFields: res.IDFields}.IDFieldNames()),
				StatsFile:    res.StatsFile,
				Replaced:     render.NonNil(res.Replaced),
				Warnings:     render.NonNil(res.Warnings),
				statsGiven:   opts.Stats != "",
			}
			for _, w := range res.Warnings {
				fmt.Fprintf(a.stderr, "gctl: warning: %s\n", w)
			}
			if a.output == render.OutputJSON {
				return render.WriteJSON(a.stdout, out)
			}
			return writeConvertOutput(a.stdout, out)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Format, "format", "", "input format: "+strings.Join(convertFormats, ", "))
	f.StringVar(&opts.Input, "input", "", "raw data file (for idx: the images file)")
	f.StringVar(&opts.Labels, "labels", "", "labels file (idx only)")
	f.StringVar(&opts.Columns, "columns", "", "text formats: what the columns are, e.g. label=4,id:user=1,hash:item=2,dense=5-7 (default: the last the label, the others dense)")
	f.BoolVar(&opts.Header, "header", false, "text formats: the first line names the columns and is no record")
	f.StringVar(&opts.OutPrefix, "out", "", "output DIR/PREFIX of the shard files")
	f.IntVar(&opts.Shards, "shards", 0, "number of training shards (and of test shards)")
	f.Float64Var(&opts.TestFraction, "test-fraction", 0, "fraction of the records held out as the test part, in [0, 1)")
	f.Uint64Var(&opts.Seed, "seed", 1, "seed of the shuffle before the train/test split")
	f.BoolVar(&opts.Normalize, "normalize", false, "scale each feature column with statistics of the training part, written to PREFIX-stats.json")
	f.StringVar(&opts.Stats, "stats", "", "scale with the statistics in FILE (PREFIX-stats.json of a training set) instead of computing them")
	f.StringVar(&opts.Part, "part", dataset.PartTrain, "which part the input becomes: train (split off a test part with --test-fraction) or test (every record)")
	f.IntVar(&opts.ChunkRecords, "chunk-records", 16, "records per chunk: the unit a task is cut from")
	f.BoolVar(&opts.Replace, "replace", false, "remove the shards of another --shards count under --out (after writing the new set) instead of refusing")
	f.IntVar(&opts.Classes, "classes", 0, "number of label classes (0: infer; idx gives max(10, largest label+1), text gives 0 = regression)")
	return cmd
}

// checkConvertOptions rejects a command line that cannot work before any
// file is read, naming the flag.
func checkConvertOptions(o dataset.ConvertOptions) error {
	switch {
	case o.Format == "":
		return usagef("data convert needs --format (%s)", strings.Join(convertFormats, ", "))
	case !slices.Contains(convertFormats, o.Format):
		return usagef("--format %q is not a known format: use one of %s", o.Format, strings.Join(convertFormats, ", "))
	case o.Input == "":
		return usagef("data convert needs --input FILE")
	case (o.Columns != "" || o.Header) && (o.Format == dataset.FormatIDX || o.Format == dataset.FormatMovieLens):
		return usagef("--columns and --header are for the text formats (whitespace, csv, tsv), not --format %s", o.Format)
	case o.Format == dataset.FormatMovieLens && (o.Normalize || o.Stats != ""):
		return usagef("--format movielens has no dense features to --normalize or scale with --stats: drop them")
	case o.Format == "idx" && o.Labels == "":
		return usagef("--format idx needs --labels FILE (the IDX labels file)")
	case o.Format != "idx" && o.Labels != "":
		return usagef("--labels is for --format idx only; in %s input the label is the last column", o.Format)
	case o.OutPrefix == "":
		return usagef("data convert needs --out DIR/PREFIX")
	case o.Shards < 1:
		return usagef("data convert needs --shards N with N >= 1, got %d", o.Shards)
	case !(o.TestFraction >= 0 && o.TestFraction < 1):
		return usagef("--test-fraction %v is out of range: it must be in [0, 1)", o.TestFraction)
	case o.ChunkRecords < 1:
		return usagef("--chunk-records %d: a chunk holds at least 1 record", o.ChunkRecords)
	case o.Classes < 0:
		return usagef("--classes %d: the number of classes cannot be negative", o.Classes)
	}
	return checkConvertPart(o)
}

// checkConvertPart checks --part and the flags that depend on it.
func checkConvertPart(o dataset.ConvertOptions) error {
	switch {
	case o.Part != dataset.PartTrain && o.Part != dataset.PartTest:
		return usagef("--part %q: use --part train or --part test", o.Part)
	case o.Normalize && o.Stats != "":
		return usagef("--normalize computes statistics and --stats applies existing ones: give one of them")
	case o.Part == dataset.PartTest && o.Normalize:
		return usagef("--part test with --normalize: statistics come from the training set; give its statistics with --stats FILE")
	case o.Part == dataset.PartTest && o.TestFraction != 0:
		return usagef("--part test writes every record as a test record; drop --test-fraction")
	}
	return nil
}

func writeConvertOutput(w io.Writer, o convertOutput) error {
	var b strings.Builder
	if len(o.TrainFiles) > 0 {
		fmt.Fprintf(&b, "train: %d records, %d features, %d shards\n", o.TrainRecords, o.Features, len(o.TrainFiles))
	} else {
		fmt.Fprintf(&b, "%d features\n", o.Features)
	}
	if len(o.IDFields) > 0 {
		fmt.Fprintf(&b, "id fields: %s\n", strings.Join(o.IDFields, ", "))
	}
	if o.Classes > 0 {
		fmt.Fprintf(&b, "classes: %d\n", o.Classes)
	}
	for _, f := range o.TrainFiles {
		fmt.Fprintf(&b, "  %s\n", f)
	}
	if len(o.TestFiles) > 0 {
		fmt.Fprintf(&b, "test: %d records, %d shards\n", o.TestRecords, len(o.TestFiles))
		for _, f := range o.TestFiles {
			fmt.Fprintf(&b, "  %s\n", f)
		}
	}
	if len(o.Replaced) > 0 {
		fmt.Fprintf(&b, "replaced: removed the %d shards of the old set:\n", len(o.Replaced))
		for _, f := range o.Replaced {
			fmt.Fprintf(&b, "  %s\n", f)
		}
	}
	switch {
	case o.statsGiven:
		fmt.Fprintf(&b, "normalized with the statistics of %s\n", o.StatsFile)
	case o.StatsFile != "":
		fmt.Fprintf(&b, "normalization statistics: %s\n", o.StatsFile)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
