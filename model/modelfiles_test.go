package model

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWriteReadRoundTrip(t *testing.T) {
	spec := Spec{Kind: KindMLP, Inputs: 5, Outputs: 3, Hidden: []int{4}}
	m := mustNew(t, spec)
	params := randomParams(m, rand.New(rand.NewPCG(1, 2)))
	modelDir := filepath.Join(t.TempDir(), "model")

	dir, err := WriteModel(modelDir, 3, 1234, m, params)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(modelDir, "pass-00003"); dir != want {
		t.Errorf("WriteModel dir = %q; want %q", dir, want)
	}
	man, got, err := ReadModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	if man.Kind != spec.Kind || man.Inputs != 5 || man.Outputs != 3 || !slices.Equal(man.Hidden, spec.Hidden) ||
		man.Pass != 3 || man.Step != 1234 {
		t.Errorf("manifest = %+v; want spec %+v, pass 3, step 1234", man, spec)
	}
	for j, p := range m.Params() {
		pm := man.Params[j]
		if pm.Name != p.Name || !slices.Equal(pm.Shape, p.Shape) || pm.File != p.Name+".f32" || len(pm.SHA256) != 64 {
			t.Errorf("manifest param %d = %+v; want %s %v in %s.f32 with a sha256", j, pm, p.Name, p.Shape, p.Name)
		}
		info, err := os.Stat(filepath.Join(dir, pm.File))
		if err != nil || info.Size() != int64(4*p.Size()) {
			t.Errorf("%s: stat %v, %v; want %d bytes", pm.File, info, err, 4*p.Size())
		}
		if !slices.EqualFunc(got[j], params[j], func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
			t.Errorf("param %s read back %v; want %v", p.Name, got[j], params[j])
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil || !strings.Contains(string(raw), `"sha256"`) || !strings.Contains(string(raw), `"kind": "mlp"`) {
		t.Errorf("manifest.json = %s, %v; want JSON with kind and sha256", raw, err)
	}
	assertNoTempLeftovers(t, modelDir)
}

func TestWriteModelIsDeterministic(t *testing.T) {
	m := mustNew(t, Spec{Kind: KindSoftmax, Inputs: 6, Outputs: 4})
	params := zeroParams(m)
	m.Init(9, params)
	base := t.TempDir()
	dirA, errA := WriteModel(filepath.Join(base, "a"), 1, 10, m, params)
	dirB, errB := WriteModel(filepath.Join(base, "b"), 1, 10, m, slices.Clone(params))
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	manA, _, _ := ReadModel(dirA)
	manB, _, _ := ReadModel(dirB)
	for j := range manA.Params {
		if manA.Params[j].SHA256 != manB.Params[j].SHA256 {
			t.Errorf("param %s: sha256 %s vs %s for identical params", manA.Params[j].Name, manA.Params[j].SHA256, manB.Params[j].SHA256)
		}
	}
	a, _ := os.ReadFile(filepath.Join(dirA, ManifestFile))
	b, _ := os.ReadFile(filepath.Join(dirB, ManifestFile))
	if string(a) != string(b) {
		t.Errorf("manifests differ:\n%s\n%s", a, b)
	}

	params[0][0] += 1
	dirC, err := WriteModel(filepath.Join(base, "c"), 1, 10, m, params)
	if err != nil {
		t.Fatal(err)
	}
	manC, _, _ := ReadModel(dirC)
	if manC.Params[0].SHA256 == manA.Params[0].SHA256 {
		t.Errorf("changing w[0] did not change its sha256")
	}
}

func TestReadModelDetectsCorruption(t *testing.T) {
	m := mustNew(t, Spec{Kind: KindLinear, Inputs: 4, Outputs: 1})
	params := [][]float32{{1, 2, 3, 4}, {5}}
	tests := []struct {
		name     string
		damage   func(dir string) error
		wantFile string
	}{
		{"flipped byte", func(dir string) error {
			return flipByte(filepath.Join(dir, "w.f32"), 5)
		}, "w.f32"},
		{"truncated", func(dir string) error {
			return os.Truncate(filepath.Join(dir, "b.f32"), 2)
		}, "b.f32"},
		{"manifest not json", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, ManifestFile), []byte("{"), 0o644)
		}, ManifestFile},
		{"manifest shape changed", func(dir string) error {
			return rewriteManifest(dir, `"shape": [
        4,`, `"shape": [
        3,`)
		}, ManifestFile},
		{"manifest escapes dir", func(dir string) error {
			return rewriteManifest(dir, `"file": "w.f32"`, `"file": "../w.f32"`)
		}, ManifestFile},
		{"manifest kind unknown", func(dir string) error {
			return rewriteManifest(dir, `"kind": "linear"`, `"kind": "nope"`)
		}, ManifestFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, err := WriteModel(t.TempDir(), 0, 1, m, params)
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.damage(dir); err != nil {
				t.Fatal(err)
			}
			_, got, err := ReadModel(dir)
			if !errors.Is(err, ErrCorruptModel) {
				t.Fatalf("ReadModel = %v, %v; want ErrCorruptModel", got, err)
			}
			if !strings.Contains(err.Error(), tt.wantFile) {
				t.Errorf("error %q does not name %s", err, tt.wantFile)
			}
		})
	}
}

func TestReadModelMissingFileIsNotExist(t *testing.T) {
	m := mustNew(t, Spec{Kind: KindLinear, Inputs: 2, Outputs: 1})
	dir, err := WriteModel(t.TempDir(), 0, 1, m, zeroParams(m))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "b.f32")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadModel(dir); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "b.f32") {
		t.Errorf("ReadModel with b.f32 missing = %v; want ErrNotExist naming b.f32", err)
	}
	if _, _, err := ReadModel(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadModel(empty dir) = %v; want ErrNotExist", err)
	}
}

func TestLatestPointsAtNewestPass(t *testing.T) {
	m := mustNew(t, Spec{Kind: KindLinear, Inputs: 2, Outputs: 1})
	modelDir := t.TempDir()
	for pass := range 3 {
		params := [][]float32{{float32(pass), 0}, {0}}
		if _, err := WriteModel(modelDir, pass, int64(10*pass), m, params); err != nil {
			t.Fatal(err)
		}
		target, err := os.Readlink(filepath.Join(modelDir, LatestLink))
		if err != nil || target != PassDirName(pass) {
			t.Fatalf("after pass %d latest -> %q, %v; want %q", pass, target, err, PassDirName(pass))
		}
		man, got, err := ReadModel(filepath.Join(modelDir, LatestLink))
		if err != nil || man.Pass != pass || got[0][0] != float32(pass) {
			t.Fatalf("ReadModel(latest) after pass %d = pass %d, w %v, %v", pass, man.Pass, got, err)
		}
	}
	for pass := range 3 {
		if man, _, err := ReadModel(filepath.Join(modelDir, PassDirName(pass))); err != nil || man.Step != int64(10*pass) {
			t.Errorf("older pass %d: step %d, %v; want kept with step %d", pass, man.Step, err, 10*pass)
		}
	}
	assertNoTempLeftovers(t, modelDir)
}

func TestWriteModelReplacesExistingPass(t *testing.T) {
	m := mustNew(t, Spec{Kind: KindLinear, Inputs: 2, Outputs: 1})
	modelDir := t.TempDir()
	if _, err := WriteModel(modelDir, 1, 5, m, [][]float32{{1, 1}, {1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteModel(modelDir, 2, 9, m, [][]float32{{2, 2}, {2}}); err != nil {
		t.Fatal(err)
	}
	// Pass 1 again (a restart redoing it): the directory is replaced and latest follows it.
	if _, err := WriteModel(modelDir, 1, 6, m, [][]float32{{3, 3}, {3}}); err != nil {
		t.Fatal(err)
	}
	man, got, err := ReadModel(filepath.Join(modelDir, LatestLink))
	if err != nil || man.Pass != 1 || man.Step != 6 || got[1][0] != 3 {
		t.Errorf("latest = pass %d step %d params %v, %v; want rewritten pass 1 step 6", man.Pass, man.Step, got, err)
	}
	assertNoTempLeftovers(t, modelDir)
}

func TestWriteModelRejectsBadInput(t *testing.T) {
	m := mustNew(t, Spec{Kind: KindLinear, Inputs: 2, Outputs: 1})
	modelDir := t.TempDir()
	if _, err := WriteModel(modelDir, -1, 0, m, zeroParams(m)); !errors.Is(err, ErrInvalidPass) {
		t.Errorf("pass -1: %v; want ErrInvalidPass", err)
	}
	if _, err := WriteModel(modelDir, 0, 0, m, [][]float32{{1}, {1}}); !errors.Is(err, ErrParamMismatch) {
		t.Errorf("short w: %v; want ErrParamMismatch", err)
	}
	entries, _ := os.ReadDir(modelDir)
	if len(entries) != 0 {
		t.Errorf("rejected writes left %d entries in the model dir", len(entries))
	}
}

func assertNoTempLeftovers(t *testing.T, modelDir string) {
	t.Helper()
	err := filepath.WalkDir(modelDir, func(path string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(filepath.Base(path), ".") && path != modelDir {
			t.Errorf("temporary left behind: %s", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func flipByte(path string, offset int) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	data[offset] ^= 0x40
	return os.WriteFile(path, data, 0o644)
}

func rewriteManifest(dir, old, replacement string) error {
	path := filepath.Join(dir, ManifestFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !strings.Contains(string(data), old) {
		return errors.New("manifest does not contain " + old)
	}
	return os.WriteFile(path, []byte(strings.Replace(string(data), old, replacement, 1)), 0o644)
}
