package model

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"path/filepath"
)

// maxTableRows bounds one table's rows in a manifest (as many as 1 Gi
// floats of dim 1), so that a corrupt count cannot ask for absurd memory.
const maxTableRows = maxProgramParams

// TableFiles are a table's two file names as a pass directory keeps them,
// ids first; an error if the manifest names anything but plain files, or
// its rows and dim are not sane.
func (t TableManifest) TableFiles() ([2]string, error) {
	if t.Rows < 0 || t.Rows > maxTableRows || t.Dim <= 0 || t.Dim > maxProgramParams || t.Rows > maxProgramParams/t.Dim {
		return [2]string{}, fmt.Errorf("table %q: %d rows of dim %d: %w", t.Name, t.Rows, t.Dim, ErrCorruptModel)
	}
	for _, f := range []string{t.IDsFile, t.File} {
		if f == "" || f == "." || f == ".." || filepath.Base(f) != f {
			return [2]string{}, fmt.Errorf("table %q: file %q is not a plain file name: %w", t.Name, f, ErrCorruptModel)
		}
	}
	return [2]string{t.IDsFile, t.File}, nil
}

// DecodeTable checks a table's two files' bytes (ids: Rows little-endian
// uint64; vals: Rows × Dim float32) against its manifest entry, sizes and
// sha256, and decodes them; a mismatch is ErrCorruptModel naming the file.
func DecodeTable(t TableManifest, ids, vals []byte) (TableRows, error) {
	if _, err := t.TableFiles(); err != nil {
		return TableRows{}, err
	}
	if err := checkHashed(t.IDsFile, ids, 8*t.Rows, t.IDsSHA256); err != nil {
		return TableRows{}, fmt.Errorf("table %q: %w", t.Name, err)
	}
	if err := checkHashed(t.File, vals, 4*t.Rows*t.Dim, t.SHA256); err != nil {
		return TableRows{}, fmt.Errorf("table %q: %w", t.Name, err)
	}
	out := TableRows{Name: t.Name, Dim: t.Dim, IDs: make([]uint64, t.Rows)}
	for i := range out.IDs {
		out.IDs[i] = binary.LittleEndian.Uint64(ids[8*i:])
	}
	var err error
	if out.Vals, err = BytesFloat32(vals); err != nil {
		return TableRows{}, fmt.Errorf("table %q: %w", t.Name, err)
	}
	return out, nil
}

// IDBytes is ids as a table's ids file keeps them: little-endian uint64.
func IDBytes(ids []uint64) []byte {
	b := make([]byte, 0, 8*len(ids))
	for _, id := range ids {
		b = binary.LittleEndian.AppendUint64(b, id)
	}
	return b
}

func checkHashed(file string, data []byte, size int, want string) error {
	if len(data) != size {
		return fmt.Errorf("%s: %d bytes, want %d: %w", file, len(data), size, ErrCorruptModel)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != want {
		return fmt.Errorf("%s: sha256 %s, manifest says %s: %w", file, got, want, ErrCorruptModel)
	}
	return nil
}

// ReadTablesIn reads, checked against the manifest (sizes and sha256), the
// tables of the model in dir for which load says yes, in manifest order.
func ReadTablesIn(read ReadFunc, dir string, man Manifest, load func(name string) bool) ([]TableRows, error) {
	var out []TableRows
	for _, t := range man.Tables {
		if !load(t.Name) {
			continue
		}
		files, err := t.TableFiles()
		if err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
		var data [2][]byte
		for k, f := range files {
			if data[k], err = read(filepath.Join(dir, f)); err != nil {
				return nil, fmt.Errorf("model: %w", err)
			}
		}
		rows, err := DecodeTable(t, data[0], data[1])
		if err != nil {
			return nil, fmt.Errorf("model: %s: %w", dir, err)
		}
		out = append(out, rows)
	}
	return out, nil
}
