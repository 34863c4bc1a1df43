package dataset

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func smallSynth(dir string, seed uint64) SynthOptions {
	return SynthOptions{Dir: dir, Users: 40, Movies: 30, Ratings: 500, Dim: 4, Noise: 0.3, Seed: seed, TestFraction: 0.2, SplitSeed: 3}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestSynthMovieLensDeterministic: the same options write the same bytes,
// another seed other ratings.
func TestSynthMovieLensDeterministic(t *testing.T) {
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	for dir, seed := range map[string]uint64{a: 1, b: 1, c: 2} {
		if _, err := SynthMovieLens(smallSynth(dir, seed)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{MovieLensRatings, MovieLensUsers, MovieLensMovies, "planted.json", "optimum.json"} {
		x, _ := os.ReadFile(filepath.Join(a, name))
		y, _ := os.ReadFile(filepath.Join(b, name))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs of the same seed (or is empty)", name)
		}
	}
	x, _ := os.ReadFile(filepath.Join(a, MovieLensRatings))
	z, _ := os.ReadFile(filepath.Join(c, MovieLensRatings))
	if bytes.Equal(x, z) {
		t.Error("seeds 1 and 2 wrote the same ratings")
	}
}

// TestSynthMovieLensOptimum converts the generated files as a user would
// and recomputes optimum.json's RMSEs from planted.json and the shards: the
// test part of convert's split is the one optimum.json measured.
func TestSynthMovieLensOptimum(t *testing.T) {
	dir := t.TempDir()
	o := smallSynth(dir, 7)
	if _, err := SynthMovieLens(o); err != nil {
		t.Fatal(err)
	}
	var opt Optimum
	var p Planted
	readJSON(t, filepath.Join(dir, "optimum.json"), &opt)
	readJSON(t, filepath.Join(dir, "planted.json"), &p)
	res, err := Convert(ConvertOptions{Format: FormatMovieLens, Input: dir, OutPrefix: filepath.Join(dir, "out", "ml"),
		Shards: 2, TestFraction: o.TestFraction, Seed: o.SplitSeed})
	if err != nil {
		t.Fatal(err)
	}
	rmse := func(files []string) (float64, int) {
		ex, err := ReadAll(files)
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for _, e := range ex {
			d := float64(e.Label) - p.Predict(e.IDs[0][0], e.IDs[1][0])
			sum += d * d
		}
		return math.Sqrt(sum / float64(len(ex))), len(ex)
	}
	test, n := rmse(res.TestFiles)
	all, total := rmse(append(res.TrainFiles, res.TestFiles...))
	if n != opt.TestRecords || total != opt.Ratings || math.Abs(test-opt.RMSETest) > 1e-9 || math.Abs(all-opt.RMSEAll) > 1e-9 {
		t.Errorf("recomputed RMSE %v over %d test records, %v over %d; optimum.json says %+v", test, n, all, total, opt)
	}
	if math.Abs(opt.RMSEAll-o.Noise) > 0.1*o.Noise || opt.RMSEConstant < 2*opt.RMSEAll {
		t.Errorf("optimum %+v: want rmse_all near the noise %v and the constant predictor far worse", opt, o.Noise)
	}
}
