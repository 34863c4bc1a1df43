package e2e

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/internal/testing/specyaml"
	"github.com/gtrain/gtrain/jobspec"
)

// operatorCase is one bad (or borderline) input of issue 17 as an operator
// types it: the command, its exit code, what its output must say, and what
// must still be there afterwards (nothing already written is lost).
type operatorCase struct {
	name   string
	args   func(t *testing.T) []string // may prepare files first
	code   int
	want   []string           // in stdout or stderr
	intact func(t *testing.T) // nil: nothing to check
}

// TestOperatorInput walks issue 17's operator cases with the real binaries:
// stale shard sets, zero and fractional counts, labels a model cannot
// train on, purge confirmation, plots of nothing, a directory as -f. Most
// need no running job; the purge and plot cases use one that stays PENDING.
func TestOperatorInput(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	work := t.TempDir()
	a := e2erig.StartAgent(t, filepath.Join(work, "agent"))
	convertHousingWithGctl(t, a, work) // work/data/housing-{train,test}-0000N-of-00004
	cases := append(append(shardCases(t, work), specCases(t, a, work)...), jobCases(t, a, work)...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := a.Gctl(t, c.args(t)...)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, out, errs)
			}
			for _, w := range c.want {
				if !strings.Contains(out+errs, w) {
					t.Errorf("output does not say %q:\nstdout: %s\nstderr: %s", w, out, errs)
				}
			}
			if c.intact != nil {
				c.intact(t)
			}
		})
	}
}

// shardCases: data convert into a prefix holding another set, more shards
// than records, IDX labels that infer too many classes, and a job glob
// over two sets.
func shardCases(t *testing.T, work string) []operatorCase {
	housingData := filepath.Join(e2erig.RepoRoot(), "examples/data/uci_housing/housing.data")
	convert := func(out string, extra ...string) []string {
		return append([]string{"data", "convert", "--format", "whitespace", "--input", housingData, "--out", out}, extra...)
	}
	return []operatorCase{
		{"convert into a prefix holding another shard count", func(*testing.T) []string {
			return convert(filepath.Join(work, "data", "housing"), "--shards", "2", "--test-fraction", "0.2", "--normalize")
		}, 2, []string{"housing-train-*-of-00004 (4 files)", "--replace"}, func(t *testing.T) {
			wantFiles(t, filepath.Join(work, "data", "housing-train-*"), 4, "-of-00004")
		}},
		{"convert with --replace removes the old set and says so", func(t *testing.T) []string {
			convertInProcess(t, filepath.Join(work, "rep", "housing"), 4)
			return convert(filepath.Join(work, "rep", "housing"), "--shards", "2", "--replace")
		}, 0, []string{"replaced: removed the 4 shards of the old set", "housing-train-00003-of-00004"}, func(t *testing.T) {
			wantFiles(t, filepath.Join(work, "rep", "housing-train-*"), 2, "-of-00002")
		}},
		{"convert more shards than records", func(*testing.T) []string {
			return convert(filepath.Join(work, "many", "housing"), "--shards", "1000")
		}, 2, []string{"1000 shards for the 506 records", "at most --shards 506"}, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(work, "many")); !os.IsNotExist(err) {
				t.Errorf("the refused convert created its output directory (stat: %v)", err)
			}
		}},
		{"IDX label 200 warns about 201 classes", func(t *testing.T) []string {
			images, labels := writeIDX(t, work, []byte{0, 1, 200})
			return []string{"data", "convert", "--format", "idx", "--input", images, "--labels", labels, "--out", filepath.Join(work, "idx", "x"), "--shards", "1"}
		}, 0, []string{"warning", "201 classes", "198 of the classes", "--classes"}, nil},
		{"job glob mixing two shard sets", func(t *testing.T) []string {
			mixedSets(t, work)
			return []string{"job", "start", "-f", e2erig.WriteSpec(t, work, fitALineJob("mixed", jobspec.ModeSync, 1, "mixed")), "--detach"}
		}, 2, []string{"data.train", "-of-00002 (2 files) and", "-of-00004 (4 files)", "--replace"}, nil},
	}
}

// specCases: counts and rates written as 0, negative or fractional, labels
// the model cannot train on, a directory given as the spec.
func specCases(t *testing.T, a *e2erig.Agent, work string) []operatorCase {
	// A refused spec submits nothing: no job of its name appears.
	noJob := func(t *testing.T) {
		if out, _, _ := a.Gctl(t, "job", "list"); strings.Contains(out, "counts") {
			t.Errorf("a refused spec left a job:\n%s", out)
		}
	}
	spec := func(from, to string) func(*testing.T) []string {
		return func(t *testing.T) []string {
			body := specyaml.Marshal(fitALineJob("counts", jobspec.ModeSync, 2, "data")) // the faults are written ones
			if !strings.Contains(body, from) {
				t.Fatalf("the base spec lacks %q", from)
			}
			return []string{"job", "start", "-f", e2erig.WriteSpecText(t, work, strings.Replace(body, from, to, 1)), "--detach"}
		}
	}
	cases := []operatorCase{
		{"passes 0", spec("passes: 2", "passes: 0"), 2, []string{"passes", "at least 1, got 0"}, nil},
		{"passes 3.5", spec("passes: 2", "passes: 3.5"), 2, []string{"passes", "whole number, got 3.5"}, nil},
		{"trainers 0", spec("trainers: 2", "trainers: 0"), 2, []string{"trainers", "at least 1, got 0"}, nil},
		{"pservers -1", spec("pservers: 2", "pservers: -1"), 2, []string{"pservers", "at least 1"}, nil},
		{"batch_size 0", spec("batch_size: 20", "batch_size: 0"), 2, []string{"batch_size", "at least 1, got 0"}, nil},
		{"global_batch 0", spec("batch_size: 20", "batch_size: 20\nglobal_batch: 0"), 2, []string{"global_batch", "at least 1, got 0"}, nil},
		{"learning_rate 0", spec("learning_rate: 0.01", "learning_rate: 0"), 2, []string{"optimizer.learning_rate", "> 0, got 0"}, nil},
		{"--passes 0", func(t *testing.T) []string {
			return append(spec("passes: 2", "passes: 2")(t), "--passes", "0")
		}, 2, []string{"passes", "--passes"}, nil},
		{"softmax on regression labels", spec("model: {kind: linear, inputs: 13, outputs: 1}", "model: {kind: softmax, inputs: 13, outputs: 10}"),
			2, []string{"data.train", "is not a class index", "model.outputs = 10 classes", "linear"}, nil},
		{"-f names a directory", func(*testing.T) []string {
			return []string{"job", "start", "-f", work}
		}, 2, []string{"is a directory"}, nil},
	}
	for i := range cases {
		cases[i].intact = noJob
	}
	return cases
}

// jobCases need a job record: one that stays PENDING (it asks for more
// CPU than the node has), so no pass ever finishes.
func jobCases(t *testing.T, a *e2erig.Agent, work string) []operatorCase {
	const name = "waits"
	submitted := false
	waiting := func(t *testing.T) {
		if submitted {
			return
		}
		body := fitALineJob(name, jobspec.ModeSync, 2, "data")
		body.Resources.Trainer.CPU = 1000
		if out, errs, code := a.Gctl(t, "job", "start", "-f", e2erig.WriteSpec(t, work, body), "--detach"); code != 0 {
			t.Fatalf("submit a waiting job: exit %d: %s%s", code, out, errs)
		}
		submitted = true
	}
	stillThere := func(t *testing.T) {
		if _, errs, code := a.Gctl(t, "job", "status", name); code != 0 {
			t.Errorf("job %s is gone after a refused purge: exit %d: %s", name, code, errs)
		}
	}
	plot := filepath.Join(work, "loss.png")
	return []operatorCase{
		{"plot --out with no finished pass", func(t *testing.T) []string {
			waiting(t)
			return []string{"job", "plot", name, "--out", plot}
		}, 1, []string{"no finished pass yet", "not written"}, func(t *testing.T) {
			if _, err := os.Stat(plot); !os.IsNotExist(err) {
				t.Errorf("plot of no pass wrote %s (stat: %v)", plot, err)
			}
		}},
		{"stop --purge without a terminal or --yes", func(t *testing.T) []string {
			waiting(t)
			return []string{"job", "stop", name, "--purge"}
		}, 2, []string{"deletes, for good", "the job's record", "pass --yes", "without --purge"}, stillThere},
		{"stop --purge --yes", func(t *testing.T) []string {
			waiting(t)
			return []string{"job", "stop", name, "--purge", "--yes"}
		}, 0, []string{"purged", "deleted: the job's record"}, nil},
	}
}

// convertInProcess writes a housing set of shards (no test part) at prefix.
func convertInProcess(t *testing.T, prefix string, shards int) {
	t.Helper()
	if _, err := dataset.Convert(dataset.ConvertOptions{Format: "whitespace", Shards: shards,
		Input: filepath.Join(e2erig.RepoRoot(), "examples/data/uci_housing/housing.data"), OutPrefix: prefix}); err != nil {
		t.Fatal(err)
	}
}

// mixedSets leaves two conversions of housing in work/mixed: a 4-shard set
// (with a test part) and the train shards of a 2-shard one beside it, as a
// convert without the stale-set check did.
func mixedSets(t *testing.T, work string) {
	t.Helper()
	e2erig.Housing(t, filepath.Join(work, "mixed"))
	other := filepath.Join(work, "other")
	convertInProcess(t, filepath.Join(other, "housing"), 2)
	for i := range 2 {
		src := dataset.ShardPath(filepath.Join(other, "housing"), dataset.PartTrain, i, 2)
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, "mixed", filepath.Base(src)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// writeIDX writes an IDX images file (one 2×2 image per label) and labels.
func writeIDX(t *testing.T, dir string, labels []byte) (images, labelsFile string) {
	t.Helper()
	header := func(kind byte, dims ...uint32) []byte {
		b := []byte{0, 0, 0x08, kind}
		for _, d := range dims {
			b = binary.BigEndian.AppendUint32(b, d)
		}
		return b
	}
	n := uint32(len(labels))
	img := append(header(3, n, 2, 2), make([]byte, 4*len(labels))...)
	images, labelsFile = filepath.Join(dir, "images-idx3-ubyte"), filepath.Join(dir, "labels-idx1-ubyte")
	if err := os.WriteFile(images, img, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(labelsFile, append(header(1, n), labels...), 0o644); err != nil {
		t.Fatal(err)
	}
	return images, labelsFile
}

// wantFiles asserts pattern matches n files, all of them with suffix in
// their name.
func wantFiles(t *testing.T, pattern string, n int, suffix string) {
	t.Helper()
	files, _ := filepath.Glob(pattern)
	ok := len(files) == n
	for _, f := range files {
		ok = ok && strings.HasSuffix(f, suffix)
	}
	if !ok {
		t.Errorf("%s matches %v, want %d files ending in %s", pattern, files, n, suffix)
	}
}
