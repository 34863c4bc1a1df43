package dataset

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// idxFile builds an unsigned-byte IDX file with the given dimensions.
func idxFile(dims []uint32, data []byte) []byte {
	b := []byte{0, 0, idxUnsignedByte, byte(len(dims))}
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, d)
	}
	return append(b, data...)
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tinyIDX is 5 images of 2x3 pixels with labels 0..4.
func tinyIDX() (images, labels []byte) {
	pixels := make([]byte, 5*6)
	for i := range pixels {
		pixels[i] = byte(i * 8)
	}
	return idxFile([]uint32{5, 2, 3}, pixels), idxFile([]uint32{5}, []byte{0, 1, 2, 3, 4})
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConvertIDX(t *testing.T) {
	images, labels := tinyIDX()
	for _, compressed := range []bool{false, true} {
		dir := t.TempDir()
		img, lbl := images, labels
		if compressed {
			img, lbl = gzipped(t, images), gzipped(t, labels)
		}
		res, err := Convert(ConvertOptions{
			Format: FormatIDX, Input: writeFile(t, dir, "img.idx3-ubyte", img), Labels: writeFile(t, dir, "lbl.idx1-ubyte", lbl),
			OutPrefix: filepath.Join(dir, "out", "mnist"), Shards: 2, ChunkRecords: 2,
		})
		if err != nil {
			t.Fatalf("gzip %v: %v", compressed, err)
		}
		if res.Features != 6 || res.Classes != 10 || res.TrainRecords != 5 {
			t.Errorf("gzip %v: result %+v, want 6 features, 10 classes, 5 records", compressed, res)
		}
		got := readFiles(t, res.TrainFiles)
		for i, e := range got {
			if e.Label != float32(i) {
				t.Errorf("record %d label %v, want %d", i, e.Label, i)
			}
			for j, x := range e.Features {
				if want := float32((i*6+j)*8) / 255; x != want {
					t.Errorf("record %d pixel %d = %v, want %v", i, j, x, want)
				}
			}
		}
		meta, _, err := ReadShardMeta(res.TrainFiles[0])
		if err != nil {
			t.Fatal(err)
		}
		if meta.Classes != 10 || meta.Features != 6 {
			t.Errorf("meta %+v", meta)
		}
	}
}

func TestConvertIDXInfersClassesFromLabels(t *testing.T) {
	dir := t.TempDir()
	images, _ := tinyIDX()
	labels := idxFile([]uint32{5}, []byte{0, 12, 3, 3, 1})
	opts := ConvertOptions{Format: FormatIDX, Input: writeFile(t, dir, "i", images), Labels: writeFile(t, dir, "l", labels),
		OutPrefix: filepath.Join(dir, "m"), Shards: 1}
	res, err := Convert(opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Classes != 13 {
		t.Errorf("classes %d, want 13 (max label 12 + 1)", res.Classes)
	}
	opts.Classes = 10
	if _, err := Convert(opts); !errors.Is(err, ErrBadLabel) || !strings.Contains(err.Error(), "item 1") {
		t.Errorf("label 12 with 10 classes: %v, want ErrBadLabel naming item 1", err)
	}
}

func TestConvertRejectsBadIDX(t *testing.T) {
	images, labels := tinyIDX()
	tests := []struct {
		name           string
		images, labels []byte
		mention        string
	}{
		{"bad magic", append([]byte{1, 0}, images[2:]...), labels, "bad magic 0x01000803"},
		{"float elements", append([]byte{0, 0, 0x0d}, images[3:]...), labels, "element type 0x0d"},
		{"too short", []byte{0, 0}, labels, "too short for an IDX header"},
		{"header cut", images[:9], labels, "too short for the 3 dimension sizes"},
		{"missing pixel", images[:len(images)-1], labels, "need 30 data bytes"},
		{"extra pixel", append(bytes.Clone(images), 0), labels, "need 30 data bytes"},
		{"huge dimensions", idxFile([]uint32{1 << 31, 1 << 31, 1 << 31}, nil), labels, "need more than 2^64"},
		{"count mismatch", images, idxFile([]uint32{4}, []byte{0, 1, 2, 3}), "5 images but"},
		{"labels not 1-d", images, idxFile([]uint32{5, 1}, []byte{0, 1, 2, 3, 4}), "labels file has 2 dimensions"},
		{"images 1-d", idxFile([]uint32{5}, []byte{0, 1, 2, 3, 4}), labels, "at least 2"},
		{"zero-size images", idxFile([]uint32{5, 0}, nil), labels, "0 pixels each"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := Convert(ConvertOptions{Format: FormatIDX, Input: writeFile(t, dir, "i", tt.images), Labels: writeFile(t, dir, "l", tt.labels),
				OutPrefix: filepath.Join(dir, "m"), Shards: 1})
			if !errors.Is(err, ErrBadIDX) || !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("Convert = %v, want ErrBadIDX mentioning %q", err, tt.mention)
			}
		})
	}
	dir := t.TempDir()
	_, err := Convert(ConvertOptions{Format: FormatIDX, Input: writeFile(t, dir, "i", idxFile([]uint32{0, 2, 2}, nil)),
		Labels: writeFile(t, dir, "l", idxFile([]uint32{0}, nil)), OutPrefix: filepath.Join(dir, "m"), Shards: 1})
	if !errors.Is(err, ErrNoRecords) {
		t.Errorf("zero images: %v, want ErrNoRecords", err)
	}
}
