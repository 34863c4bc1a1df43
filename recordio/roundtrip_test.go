package recordio

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name         string
		meta         []byte
		chunkRecords int
		records      [][]byte
		wantChunks   []int // records per chunk
	}{
		{name: "no records", meta: []byte(`{"features":13}`), chunkRecords: 4, records: nil, wantChunks: nil},
		{name: "one record", meta: nil, chunkRecords: 4, records: [][]byte{[]byte("hello")}, wantChunks: []int{1}},
		{name: "exactly one full chunk", chunkRecords: 3, records: numberedRecords(3), wantChunks: []int{3}},
		{name: "many records across chunks", meta: []byte("m"), chunkRecords: 7, records: numberedRecords(100),
			wantChunks: []int{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 2}},
		{name: "only empty records", chunkRecords: 2, records: [][]byte{{}, {}, {}}, wantChunks: []int{2, 1}},
		{name: "one record per chunk", chunkRecords: 1, records: numberedRecords(5), wantChunks: []int{1, 1, 1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := encode(t, tt.meta, tt.chunkRecords, tt.records)
			path := writeTemp(t, t.TempDir(), "shard", data)

			ix, got := readAllRecords(t, path)
			if ix.Path != path {
				t.Errorf("Index.Path = %q, want %q", ix.Path, path)
			}
			if !bytes.Equal(ix.Meta, tt.meta) {
				t.Errorf("Meta = %q, want %q", ix.Meta, tt.meta)
			}
			if ix.Records() != len(tt.records) {
				t.Errorf("Records() = %d, want %d", ix.Records(), len(tt.records))
			}
			var perChunk []int
			for _, c := range ix.Chunks {
				perChunk = append(perChunk, c.Records)
			}
			if !slices.Equal(perChunk, tt.wantChunks) {
				t.Errorf("records per chunk = %v, want %v", perChunk, tt.wantChunks)
			}
			if !slices.EqualFunc(got, tt.records, bytes.Equal) {
				t.Errorf("records differ:\n got %q\nwant %q", got, tt.records)
			}

			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var viaIndex [][]byte
			for i := range ix.Chunks {
				recs, err := ix.ReadChunk(f, i)
				if err != nil {
					t.Fatalf("Index.ReadChunk(%d): %v", i, err)
				}
				viaIndex = append(viaIndex, recs...)
			}
			if !slices.EqualFunc(viaIndex, tt.records, bytes.Equal) {
				t.Errorf("Index.ReadChunk records differ from written ones")
			}

			vix, err := Verify(path)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if !slices.Equal(vix.Chunks, ix.Chunks) {
				t.Errorf("Verify index %v differs from ReadIndex %v", vix.Chunks, ix.Chunks)
			}
		})
	}
}

func TestWriterChunksMatchIndex(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, []byte("meta"), 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range numberedRecords(10) {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ix, err := ReadIndexFrom(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "mem")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(w.Chunks(), ix.Chunks) {
		t.Errorf("Writer.Chunks() = %v, index = %v", w.Chunks(), ix.Chunks)
	}
	for i := 1; i < len(ix.Chunks); i++ {
		prev := ix.Chunks[i-1]
		if prev.Offset+int64(prev.Length) != ix.Chunks[i].Offset {
			t.Errorf("chunk %d starts at %d, previous ends at %d", i, ix.Chunks[i].Offset, prev.Offset+int64(prev.Length))
		}
	}
}

func TestDeterministicOutput(t *testing.T) {
	a := encode(t, []byte("m"), 4, numberedRecords(30))
	b := encode(t, []byte("m"), 4, numberedRecords(30))
	if !bytes.Equal(a, b) {
		t.Error("same input gave different bytes")
	}
}

func TestRecordsDoNotAlias(t *testing.T) {
	data := encode(t, nil, 10, [][]byte{[]byte("ab"), []byte("cd")})
	ix, err := ReadIndexFrom(bytes.NewReader(data), int64(len(data)), "mem")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ix.ReadChunk(bytes.NewReader(data), 0)
	if err != nil {
		t.Fatal(err)
	}
	_ = append(recs[0], 'X', 'Y')
	if string(recs[1]) != "cd" {
		t.Errorf("appending to record 0 changed record 1 to %q", recs[1])
	}
}

func TestWriterMisuse(t *testing.T) {
	if _, err := NewWriter(&bytes.Buffer{}, nil, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NewWriter(chunkRecords 0) error = %v, want ErrInvalidArgument", err)
	}
	w, err := NewWriter(&bytes.Buffer{}, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
	if err := w.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
}

type failingWriter struct{ after int }

var errDiskFull = errors.New("disk full")

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.after <= 0 {
		return 0, errDiskFull
	}
	f.after--
	return len(p), nil
}

func TestWriterReportsWriteErrors(t *testing.T) {
	if _, err := NewWriter(&failingWriter{after: 0}, nil, 1); !errors.Is(err, errDiskFull) {
		t.Errorf("NewWriter on failing writer = %v, want disk full", err)
	}
	w, err := NewWriter(&failingWriter{after: 1}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]byte("x")); !errors.Is(err, errDiskFull) {
		t.Errorf("Write = %v, want disk full", err)
	}
	if err := w.Write([]byte("y")); !errors.Is(err, errDiskFull) {
		t.Errorf("Write after failure = %v, want the sticky disk full error", err)
	}
	if err := w.Close(); !errors.Is(err, errDiskFull) {
		t.Errorf("Close after failure = %v, want the sticky disk full error", err)
	}
}

func TestReadChunkArguments(t *testing.T) {
	data := encode(t, nil, 2, numberedRecords(5))
	path := writeTemp(t, t.TempDir(), "shard", data)
	ix, err := ReadIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, i := range []int{-1, len(ix.Chunks)} {
		if _, err := ix.ReadChunk(f, i); !errors.Is(err, ErrNoChunk) {
			t.Errorf("Index.ReadChunk(%d) = %v, want ErrNoChunk", i, err)
		}
	}
	if _, err := ReadChunk(path, ChunkInfo{Offset: 0, Records: 1, Length: 3}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("ReadChunk(length 3) = %v, want ErrInvalidArgument", err)
	}
	beyond := ix.Chunks[0]
	beyond.Offset = int64(len(data))
	if _, err := ReadChunk(path, beyond); !errors.Is(err, ErrTruncated) {
		t.Errorf("ReadChunk past the end = %v, want ErrTruncated", err)
	}
	// A chunk info that points at the wrong place is caught by the chunk magic.
	shifted := ix.Chunks[1]
	shifted.Offset++
	if _, err := ReadChunk(path, shifted); !errors.Is(err, ErrCorrupt) {
		t.Errorf("ReadChunk at a shifted offset = %v, want ErrCorrupt", err)
	}
	if _, err := ReadIndex(path + ".missing"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadIndex(missing) = %v, want os.ErrNotExist", err)
	}
}
