package export

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
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

// Write writes params (verified against man's sha256 by the caller) into
// dir in format, then manifest.json; it returns the files written.
func Write(dir, format string, man Manifest, params [][]float32) ([]string, error) {
	if len(params) != len(man.Params) {
		return nil, fmt.Errorf("export: %d parameters, manifest lists %d", len(params), len(man.Params))
	}
	files := map[string][]byte{}
	switch format {
	case FormatNPZ:
		data, err := NPZ(man.Params, params)
		if err != nil {
			return nil, err
		}
		files[NPZFile] = data
	case FormatSafetensors:
		data, err := Safetensors(man, params)
		if err != nil {
			return nil, err
		}
		files[SafetensorsFile] = data
	case FormatRaw:
		for j, p := range man.Params {
			files[p.File] = model.Float32Bytes(params[j])
		}
	default:
		return nil, fmt.Errorf("export: format %q: want one of %s", format, strings.Join(Formats, ", "))
	}
	man.Format = format
	// An export carries the parameters only: its manifest must not list
	// optimizer files it does not hold.
	man.Optimizer = nil
	encoded, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("export: encode manifest: %w", err)
	}
	var written []string
	for name, data := range files {
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

// NPY encodes values of shape as a version 1.0 .npy array: little-endian
// float32, C order.
func NPY(shape []int, values []float32) []byte {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = fmt.Sprint(d)
	}
	tuple := "(" + strings.Join(dims, ", ") + ")"
	if len(shape) == 1 {
		tuple = "(" + dims[0] + ",)"
	}
	header := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': %s, }", tuple)
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
	b.Write(model.Float32Bytes(values))
	return b.Bytes()
}

// NPZ is numpy's .npz: a zip holding NAME.npy per parameter, stored
// uncompressed (np.load reads both).
func NPZ(ps []model.ParamManifest, params [][]float32) ([]byte, error) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for j, p := range ps {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: p.Name + ".npy", Method: zip.Store})
		if err != nil {
			return nil, fmt.Errorf("export: npz: %w", err)
		}
		if _, err := w.Write(NPY(p.Shape, params[j])); err != nil {
			return nil, fmt.Errorf("export: npz: %w", err)
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

// Safetensors encodes the parameters as a safetensors file: an 8-byte
// little-endian header length, a JSON header (dtype F32, shape and byte
// offsets per tensor; __metadata__ with the job, pass and step, strings as
// the format wants), padded with spaces to 8 bytes, then the tensors.
func Safetensors(man Manifest, params [][]float32) ([]byte, error) {
	header := map[string]any{"__metadata__": map[string]string{
		"job": man.Job, "kind": man.Kind, "pass": fmt.Sprint(man.Pass), "step": fmt.Sprint(man.Step), "format": "pt"}}
	var data bytes.Buffer
	for j, p := range man.Params {
		start := data.Len()
		data.Write(model.Float32Bytes(params[j]))
		header[p.Name] = safetensor{DType: "F32", Shape: p.Shape, Offsets: [2]int{start, data.Len()}}
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
