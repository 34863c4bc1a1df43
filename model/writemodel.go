package model

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/gtrain/gtrain/internal/atomicfile"
	"github.com/gtrain/gtrain/internal/fileperm"
)

// WriteModel writes params as modelDir/pass-NNNNN/ (one raw little-endian
// float32 file per parameter, NAME.f32, plus manifest.json with their sha256)
// and then points modelDir/latest at it. It returns the pass directory.
//
// Crash safety: every file goes through a temp name, fsync and rename; the
// pass directory is assembled under a temp name and renamed into place; the
// latest symlink is swapped by renaming a fresh symlink over it. A reader
// therefore sees either the previous or the new model, never a mixture. If the
// pass directory already exists it is replaced, and latest always follows
// the pass written last.
func WriteModel(modelDir string, pass int, step int64, m Model, params [][]float32) (dir string, err error) {
	return WriteParams(modelDir, pass, step, m.Spec(), m.Params(), params)
}

// WriteParams is WriteModel for parameters that no built-in model computes
// (a user's program): s goes into the manifest, ps names the files.
func WriteParams(modelDir string, pass int, step int64, s Spec, ps []ParamSpec, params [][]float32) (dir string, err error) {
	return WriteParamsState(modelDir, pass, step, s, ps, params, nil, nil)
}

// WriteParamsState is WriteParams that also keeps the optimizer's state
// (nil: none) in the pass directory, for a warm start that asks for it,
// and a recommender's embedding rows (tables).
func WriteParamsState(modelDir string, pass int, step int64, s Spec, ps []ParamSpec, params [][]float32, opt *OptimizerState, tables []TableRows) (dir string, err error) {
	if pass < 0 {
		return "", fmt.Errorf("model: write %s: pass %d must be >= 0: %w", modelDir, pass, ErrInvalidPass)
	}
	if err := checkParams(ps, params); err != nil {
		return "", fmt.Errorf("model: write %s: %w", modelDir, err)
	}
	if opt != nil {
		for k, slot := range opt.Slots {
			if err := checkParams(ps, slot); err != nil {
				return "", fmt.Errorf("model: write %s: optimizer slot %d: %w", modelDir, k, err)
			}
		}
	}
	if err := os.MkdirAll(modelDir, fileperm.Dir); err != nil {
		return "", fmt.Errorf("model: %w", err)
	}
	name := PassDirName(pass)
	tmp, err := os.MkdirTemp(modelDir, "."+name+".tmp-")
	if err != nil {
		return "", fmt.Errorf("model: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, fileperm.Dir); err != nil {
		return "", fmt.Errorf("model: %w", err)
	}
	man := manifestHeader(s, pass, step)
	if man.Tables, err = writeTables(tmp, tables); err != nil {
		return "", fmt.Errorf("model: write %s: %w", filepath.Join(modelDir, name), err)
	}
	if err := writePassFiles(tmp, man, ps, params, opt); err != nil {
		return "", fmt.Errorf("model: write %s: %w", filepath.Join(modelDir, name), err)
	}
	dir = filepath.Join(modelDir, name)
	if err := atomicfile.ReplaceDir(tmp, dir); err != nil {
		return "", fmt.Errorf("model: %w", err)
	}
	if err := atomicfile.Symlink(name, filepath.Join(modelDir, LatestLink)); err != nil {
		return "", fmt.Errorf("model: %w", err)
	}
	return dir, nil
}

func manifestHeader(s Spec, pass int, step int64) Manifest {
	return Manifest{Kind: s.Kind, Inputs: s.Inputs, Outputs: s.Outputs, Hidden: slices.Clone(s.Hidden), Pass: pass, Step: step}
}

// writePassFiles fills dir with the parameter files, the optimizer's slot
// files (opt nil: none) and, last, the manifest.
func writePassFiles(dir string, manifest Manifest, ps []ParamSpec, params [][]float32, opt *OptimizerState) error {
	var err error
	if manifest.Params, err = writeFloatFiles(dir, ps, params, ""); err != nil {
		return err
	}
	if opt != nil {
		manifest.Optimizer = &OptimizerManifest{Kind: opt.Kind}
		for k, slot := range opt.Slots {
			files, err := writeFloatFiles(dir, ps, slot, fmt.Sprintf(".slot%d", k))
			if err != nil {
				return err
			}
			manifest.Optimizer.Slots = append(manifest.Optimizer.Slots, files)
		}
	}
	encoded, err := json.MarshalIndent(manifest, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", ManifestFile, err)
	}
	return atomicfile.WriteFile(filepath.Join(dir, ManifestFile), append(encoded, '\n'), fileperm.File)
}

// writeFloatFiles writes one file per parameter, NAME+suffix+.f32, and
// returns their manifest entries.
func writeFloatFiles(dir string, ps []ParamSpec, values [][]float32, suffix string) ([]ParamManifest, error) {
	var out []ParamManifest
	for j, p := range ps {
		file := p.Name + suffix + ParamFileExt
		sum, err := writeHashed(dir, file, Float32Bytes(values[j]))
		if err != nil {
			return nil, err
		}
		out = append(out, ParamManifest{Name: p.Name, Shape: p.Shape, File: file, SHA256: sum})
	}
	return out, nil
}

// writeHashed writes data as dir/file (crash-safe) and returns its sha256
// in lowercase hex, as manifests record it.
func writeHashed(dir, file string, data []byte) (string, error) {
	if err := atomicfile.WriteFile(filepath.Join(dir, file), data, fileperm.File); err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// writeTables writes each table's ids (table.NAME.ids, little-endian
// uint64) and values (table.NAME.f32) and returns their manifest entries.
func writeTables(dir string, tables []TableRows) ([]TableManifest, error) {
	var out []TableManifest
	for _, t := range tables {
		if len(t.Vals) != len(t.IDs)*t.Dim || t.Name == "" || filepath.Base(t.Name) != t.Name {
			return nil, fmt.Errorf("table %q: %d values for %d rows of %d: %w", t.Name, len(t.Vals), len(t.IDs), t.Dim, ErrParamMismatch)
		}
		ids := IDBytes(t.IDs)
		m := TableManifest{Name: t.Name, Dim: t.Dim, Rows: len(t.IDs), IDsFile: "table." + t.Name + ".ids", File: "table." + t.Name + ParamFileExt}
		var err error
		if m.IDsSHA256, err = writeHashed(dir, m.IDsFile, ids); err != nil {
			return nil, err
		}
		if m.SHA256, err = writeHashed(dir, m.File, Float32Bytes(t.Vals)); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
