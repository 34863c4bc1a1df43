package dataset

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConvertReadsGzipText converts the housing data gzip-compressed, under
// a .gz name and under a plain one (the magic bytes decide), and expects the
// same shards as from the plain file.
func TestConvertReadsGzipText(t *testing.T) {
	plain, err := os.ReadFile(housingPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	inputs := map[string]string{
		"plain":   housingPath,
		"gz name": writeFile(t, dir, "housing.data.gz", gzipped(t, plain)),
		"no name": writeFile(t, dir, "housing.data", gzipped(t, plain)),
	}
	var want []Example
	for _, name := range []string{"plain", "gz name", "no name"} {
		prefix := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"), "housing")
		res, err := Convert(ConvertOptions{Format: FormatWhitespace, Input: inputs[name], OutPrefix: prefix, Shards: 2, TestFraction: 0.2, Normalize: true})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := readFiles(t, append(res.TrainFiles, res.TestFiles...))
		if len(got) != 506 {
			t.Fatalf("%s: %d records, want 506", name, len(got))
		}
		if want == nil {
			want = got
			continue
		}
		for i := range want {
			if !equalExample(got[i], want[i]) {
				t.Fatalf("%s: record %d = %v, want %v as from the plain file", name, i, got[i], want[i])
			}
		}
	}
}

func equalExample(a, b Example) bool {
	if a.Label != b.Label || len(a.Features) != len(b.Features) {
		return false
	}
	for j := range a.Features {
		if a.Features[j] != b.Features[j] {
			return false
		}
	}
	return true
}

// TestConvertRejectsDamagedGzip: a cut-off stream, a flipped byte (bad
// checksum), a broken header and a .gz file that is not gzip are each
// ErrBadGzip naming the file, for text and IDX input alike.
func TestConvertRejectsDamagedGzip(t *testing.T) {
	plain, err := os.ReadFile(housingPath)
	if err != nil {
		t.Fatal(err)
	}
	good := gzipped(t, plain)
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)-6] ^= 0xff // inside the CRC-32 trailer
	images, labels := tinyIDX()
	cases := []struct {
		name, file string
		data       []byte
		mention    string
	}{
		{"cut off", "h.gz", good[:len(good)/2], "cut off"},
		{"bad checksum", "h.gz", flipped, "checksum"},
		{"bad header", "h", []byte{0x1f, 0x8b, 0x07, 0, 0}, "header"},
		{"named gz, not gzip", "h.gz", plain, "magic bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeFile(t, dir, c.file, c.data)
			_, err := Convert(ConvertOptions{Format: FormatWhitespace, Input: path, OutPrefix: filepath.Join(dir, "o"), Shards: 1})
			if !errors.Is(err, ErrBadGzip) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.mention) {
				t.Errorf("text: %v, want ErrBadGzip naming %s and %q", err, path, c.mention)
			}
			img := writeFile(t, dir, "images-"+c.file, c.data)
			_, err = Convert(ConvertOptions{Format: FormatIDX, Input: img, Labels: writeFile(t, dir, "l", labels), OutPrefix: filepath.Join(dir, "o"), Shards: 1})
			if !errors.Is(err, ErrBadGzip) || !strings.Contains(err.Error(), img) {
				t.Errorf("idx: %v, want ErrBadGzip naming %s", err, img)
			}
		})
	}
	// The same IDX bytes gzip-compressed under a .gz name convert.
	dir := t.TempDir()
	if _, err := Convert(ConvertOptions{Format: FormatIDX, Input: writeFile(t, dir, "i.gz", gzipped(t, images)),
		Labels: writeFile(t, dir, "l.gz", gzipped(t, labels)), OutPrefix: filepath.Join(dir, "o"), Shards: 1}); err != nil {
		t.Errorf("good gzip idx: %v", err)
	}
}
