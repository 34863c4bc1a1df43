package export

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gtrain/gtrain/internal/atomicfile"
	"github.com/gtrain/gtrain/internal/fileperm"
	"github.com/gtrain/gtrain/model"
)

// Formats gctl job model --format accepts.
const (
	FormatNPZ         = "npz"
	FormatSafetensors = "safetensors"
	FormatRaw         = "raw"
)

// Formats lists the formats, the default first.
var Formats = []string{FormatNPZ, FormatSafetensors, FormatRaw}

// File names in an export directory.
const (
	NPZFile         = "model.npz"
	SafetensorsFile = "model.safetensors"
)

// Manifest is manifest.json of an export: the model's manifest (so that a
// raw export is a pass directory init_from.dir reads) with the job's name,
// its spec and the format.
type Manifest struct {
	model.Manifest
	Job    string          `json:"job"`
	Format string          `json:"format"`
	Spec   json.RawMessage `json:"spec,omitempty"`
}

// Write writes params and a recommender's embedding tables (both verified
// against man's sha256 by the caller; tables in man.Tables' order, none for
// other models) into dir in format, then manifest.json; it returns the
// files written.
func Write(dir, format string, man Manifest, params [][]float32, tables []model.TableRows) ([]string, error) {
	if len(params) != len(man.Params) || len(tables) != len(man.Tables) {
		return nil, fmt.Errorf("export: %d parameters and %d tables, manifest lists %d and %d",
			len(params), len(tables), len(man.Params), len(man.Tables))
	}
	files, err := encode(format, man, params, tables)
	if err != nil {
		return nil, err
	}
	man.Format = format
	// An export carries the parameters and tables only: its manifest must
	// not list optimizer files it does not hold.
	man.Optimizer = nil
	encoded, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("export: encode manifest: %w", err)
	}
	var written []string
	for _, name := range slices.Sorted(maps.Keys(files)) {
		data := files[name]
		if err := atomicfile.WriteFile(filepath.Join(dir, name), data, fileperm.File); err != nil {
			return written, fmt.Errorf("export: %w", err)
		}
		written = append(written, name)
	}
	// The manifest last: a directory with one is complete.
	if err := atomicfile.WriteFile(filepath.Join(dir, model.ManifestFile), append(encoded, '\n'), fileperm.File); err != nil {
		return written, fmt.Errorf("export: %w", err)
	}
	return append(written, model.ManifestFile), nil
}

// encode is the files of an export in format, by name.
func encode(format string, man Manifest, params [][]float32, tables []model.TableRows) (map[string][]byte, error) {
	files := map[string][]byte{}
	switch format {
	case FormatNPZ:
		data, err := NPZ(man.Params, params, tables...)
		if err != nil {
			return nil, err
		}
		files[NPZFile] = data
	case FormatSafetensors:
		data, err := Safetensors(man, params, tables...)
		if err != nil {
			return nil, err
		}
		files[SafetensorsFile] = data
	case FormatRaw:
		// The pass directory's own names, so that init_from.dir reads it.
		for j, p := range man.Params {
			files[p.File] = model.Float32Bytes(params[j])
		}
		for i, t := range man.Tables {
			files[t.IDsFile] = model.IDBytes(tables[i].IDs)
			files[t.File] = model.Float32Bytes(tables[i].Vals)
		}
	default:
		return nil, fmt.Errorf("export: format %q: want one of %s", format, strings.Join(Formats, ", "))
	}
	return files, nil
}

// Tensor names of table NAME in npz (NAME.npy added) and safetensors.
func tableIDsName(name string) string  { return "table." + name + ".ids" }
func tableValsName(name string) string { return "table." + name }

// NPY encodes values of shape as a version 1.0 .npy array: little-endian
// float32, C order.
func NPY(shape []int, values []float32) []byte {
	return npy("<f4", shape, model.Float32Bytes(values))
}

// npy is a version 1.0 .npy array of dtype descr, C order, whose bytes
// are data.
func npy(descr string, shape []int, data []byte) []byte {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = fmt.Sprint(d)
	}
	tuple := "(" + strings.Join(dims, ", ") + ")"
	if len(shape) == 1 {
		tuple = "(" + dims[0] + ",)"
	}
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, tuple)
	// magic (6) + version (2) + header length (2) + header + '\n', a multiple of 64.
	pad := 64 - (10+len(header)+1)%64
	if pad == 64 {
		pad = 0
	}
	header += strings.Repeat(" ", pad) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	_ = binary.Write(&b, binary.LittleEndian, uint16(len(header)))
	b.WriteString(header)
	b.Write(data)
	return b.Bytes()
}

// NPZ is numpy's .npz: a zip holding NAME.npy per parameter and, per
// embedding table, table.NAME.ids.npy (uint64, (rows,)) and table.NAME.npy
// (float32, (rows, dim)), stored uncompressed (np.load reads both).
func NPZ(ps []model.ParamManifest, params [][]float32, tables ...model.TableRows) ([]byte, error) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	add := func(name string, data []byte) error {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name + ".npy", Method: zip.Store})
		if err != nil {
			return fmt.Errorf("export: npz: %w", err)
		}
		if _, err := w.Write(data); err != nil {
			return fmt.Errorf("export: npz: %w", err)
		}
		return nil
	}
	for j, p := range ps {
		if err := add(p.Name, NPY(p.Shape, params[j])); err != nil {
			return nil, err
		}
	}
	for _, t := range tables {
		rows := len(t.IDs)
		if err := add(tableIDsName(t.Name), npy("<u8", []int{rows}, model.IDBytes(t.IDs))); err != nil {
			return nil, err
		}
		if err := add(tableValsName(t.Name), NPY([]int{rows, t.Dim}, t.Vals)); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("export: npz: %w", err)
	}
	return b.Bytes(), nil
}

type safetensor struct {
	DType   string `json:"dtype"`
	Shape   []int  `json:"shape"`
	Offsets [2]int `json:"data_offsets"`
}

// Safetensors encodes the parameters and embedding tables as a
// safetensors file: an 8-byte little-endian header length, a JSON header
// (dtype, shape and byte offsets per tensor; __metadata__ with the job,
// pass and step, strings as the format wants), padded with spaces to 8
// bytes, then the tensors, back to back. A table NAME is two tensors:
// table.NAME.ids (U64 [rows]) and table.NAME (F32 [rows, dim]). The ids
// come first, so that every uint64 starts 8-byte aligned.
func Safetensors(man Manifest, params [][]float32, tables ...model.TableRows) ([]byte, error) {
	header := map[string]any{"__metadata__": map[string]string{
		"job": man.Job, "kind": man.Kind, "pass": fmt.Sprint(man.Pass), "step": fmt.Sprint(man.Step), "format": "pt"}}
	var data bytes.Buffer
	add := func(name, dtype string, shape []int, b []byte) {
		start := data.Len()
		data.Write(b)
		header[name] = safetensor{DType: dtype, Shape: shape, Offsets: [2]int{start, data.Len()}}
	}
	for _, t := range tables {
		add(tableIDsName(t.Name), "U64", []int{len(t.IDs)}, model.IDBytes(t.IDs))
	}
	for j, p := range man.Params {
		add(p.Name, "F32", p.Shape, model.Float32Bytes(params[j]))
	}
	for _, t := range tables {
		add(tableValsName(t.Name), "F32", []int{len(t.IDs), t.Dim}, model.Float32Bytes(t.Vals))
	}
	h, err := json.Marshal(header)
	if err != nil {
		return nil, fmt.Errorf("export: safetensors header: %w", err)
	}
	if pad := len(h) % 8; pad != 0 {
		h = append(h, bytes.Repeat([]byte(" "), 8-pad)...)
	}
	var b bytes.Buffer
	_ = binary.Write(&b, binary.LittleEndian, uint64(len(h)))
	b.Write(h)
	b.Write(data.Bytes())
	return b.Bytes(), nil
}
