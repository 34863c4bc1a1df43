package recordio

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// encode writes records into an in-memory record file.
func encode(t testing.TB, meta []byte, chunkRecords int, records [][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, meta, chunkRecords)
	if err != nil {
		t.Fatalf("NewWriter: %v", err)
	}
	for i, r := range records {
		if err := w.Write(r); err != nil {
			t.Fatalf("Write(record %d): %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return buf.Bytes()
}

func writeTemp(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readAllRecords reads every chunk of a file through the path-based API.
func readAllRecords(t testing.TB, path string) (*Index, [][]byte) {
	t.Helper()
	ix, err := ReadIndex(path)
	if err != nil {
		t.Fatalf("ReadIndex: %v", err)
	}
	var out [][]byte
	for i, c := range ix.Chunks {
		recs, err := ReadChunk(path, c)
		if err != nil {
			t.Fatalf("ReadChunk(%d): %v", i, err)
		}
		out = append(out, recs...)
	}
	return ix, out
}

func numberedRecords(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		// Lengths vary, including empty records every seventh.
		r := make([]byte, i%7)
		for j := range r {
			r[j] = byte(i*31 + j)
		}
		out[i] = r
	}
	return out
}
