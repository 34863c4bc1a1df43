package model

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// ReadModel reads a pass directory (or modelDir/latest) written by
// WriteModel. It checks that the manifest describes a valid model whose
// parameters have the expected names and shapes, and verifies every file's
// size and sha256; any mismatch is ErrCorruptModel naming the file.
// I/O failures (such as a missing manifest) are returned as they are.
func ReadModel(dir string) (Manifest, [][]float32, error) { return ReadModelIn(os.ReadFile, dir) }

// ReadFunc reads a whole file: os.ReadFile, or a role's
// confine.Roots.ReadFile, which refuses a path that leads out of its job's
// roots.
type ReadFunc func(path string) ([]byte, error)

// ReadModelIn is ReadModel with every file read by read.
func ReadModelIn(read ReadFunc, dir string) (Manifest, [][]float32, error) {
	manifestPath := filepath.Join(dir, ManifestFile)
	raw, err := read(manifestPath)
	if err != nil {
		return Manifest{}, nil, fmt.Errorf("model: %w", err)
	}
	var man Manifest
	if err := json.Unmarshal(raw, &man); err != nil {
		return Manifest{}, nil, fmt.Errorf("model: %s: %w: %w", manifestPath, ErrCorruptModel, err)
	}
	want, err := manifestParamSpecs(man)
	if err != nil {
		return Manifest{}, nil, fmt.Errorf("model: %s: %w: %w", manifestPath, ErrCorruptModel, err)
	}
	if err := matchManifestParams(want, man.Params); err != nil {
		return Manifest{}, nil, fmt.Errorf("model: %s: %w", manifestPath, err)
	}
	params := make([][]float32, len(man.Params))
	for j, pm := range man.Params {
		if params[j], err = readParamFile(read, dir, pm, want[j].Size()); err != nil {
			return Manifest{}, nil, fmt.Errorf("model: %w", err)
		}
	}
	return man, params, nil
}

// maxProgramParams bounds the parameters of a program model's manifest
// (1 Gi floats, the job spec's maximum).
const maxProgramParams = 1 << 30

// manifestParamSpecs is what the parameters of the manifest's model must be:
// a built-in model's own, or, for a user's program (KindProgram) and the
// recommender (whose dense parameters depend on its id fields), the
// manifest's list itself with sane shapes.
func manifestParamSpecs(man Manifest) ([]ParamSpec, error) {
	if man.Kind != KindProgram && man.Kind != KindRecommender {
		m, err := New(man.Spec())
		if err != nil {
			return nil, err
		}
		return m.Params(), nil
	}
	ps := make([]ParamSpec, 0, len(man.Params))
	total := 0
	for _, p := range man.Params {
		size := 1
		for _, d := range p.Shape {
			if d <= 0 || d > maxProgramParams || size > maxProgramParams/d {
				return nil, fmt.Errorf("param %q: shape %v", p.Name, p.Shape)
			}
			size *= d
		}
		if total += size; len(p.Shape) == 0 || total > maxProgramParams {
			return nil, fmt.Errorf("param %q: shape %v: empty, or over %d floats in all", p.Name, p.Shape, maxProgramParams)
		}
		ps = append(ps, ParamSpec{Name: p.Name, Shape: p.Shape})
	}
	return ps, nil
}

func matchManifestParams(want []ParamSpec, got []ParamManifest) error {
	if len(got) != len(want) {
		return fmt.Errorf("lists %d params, model has %d: %w", len(got), len(want), ErrCorruptModel)
	}
	for j, p := range want {
		if got[j].Name != p.Name || !slices.Equal(got[j].Shape, p.Shape) {
			return fmt.Errorf("param %d is %q %v, model wants %q %v: %w",
				j, got[j].Name, got[j].Shape, p.Name, p.Shape, ErrCorruptModel)
		}
		if f := got[j].File; f == "" || f == "." || f == ".." || filepath.Base(f) != f {
			return fmt.Errorf("param %q: file %q is not a plain file name: %w", p.Name, f, ErrCorruptModel)
		}
	}
	return nil
}

func readParamFile(read ReadFunc, dir string, pm ParamManifest, size int) ([]float32, error) {
	path := filepath.Join(dir, pm.File)
	data, err := read(path)
	if err != nil {
		return nil, err
	}
	params, err := decodeParam(pm, data, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return params, nil
}

// DecodeParam checks a parameter file's bytes against its manifest entry
// (as many float32 as its shape holds, and its sha256) and decodes them; a
// mismatch is ErrCorruptModel.
func DecodeParam(pm ParamManifest, data []byte) ([]float32, error) {
	return decodeParam(pm, data, ParamSpec{Name: pm.Name, Shape: pm.Shape}.Size())
}

func decodeParam(pm ParamManifest, data []byte, size int) ([]float32, error) {
	if len(data) != 4*size {
		return nil, fmt.Errorf("%d bytes, want %d (%d float32 for shape %v): %w",
			len(data), 4*size, size, pm.Shape, ErrCorruptModel)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != pm.SHA256 {
		return nil, fmt.Errorf("sha256 %s, manifest says %s: %w", got, pm.SHA256, ErrCorruptModel)
	}
	return BytesFloat32(data)
}

// ReadOptimizerState reads the optimizer state that the pass directory dir
// keeps beside its parameters (man is its manifest, as ReadModel returned
// it), checking every slot file as ReadModel checks a parameter's. A model
// that keeps none is ErrNoOptimizerState.
func ReadOptimizerState(dir string, man Manifest) (OptimizerState, error) {
	return ReadOptimizerStateIn(os.ReadFile, dir, man)
}

// ReadOptimizerStateIn is ReadOptimizerState with every file read by read.
func ReadOptimizerStateIn(read ReadFunc, dir string, man Manifest) (OptimizerState, error) {
	if man.Optimizer == nil {
		return OptimizerState{}, fmt.Errorf("model: %s: %w", dir, ErrNoOptimizerState)
	}
	want := man.ParamSpecs()
	st := OptimizerState{Kind: man.Optimizer.Kind}
	for k, files := range man.Optimizer.Slots {
		if err := matchManifestParams(want, files); err != nil {
			return OptimizerState{}, fmt.Errorf("model: %s: optimizer slot %d: %w", dir, k, err)
		}
		slot := make([][]float32, len(files))
		for j, pm := range files {
			var err error
			if slot[j], err = readParamFile(read, dir, pm, want[j].Size()); err != nil {
				return OptimizerState{}, fmt.Errorf("model: optimizer slot %d: %w", k, err)
			}
		}
		st.Slots = append(st.Slots, slot)
	}
	return st, nil
}
