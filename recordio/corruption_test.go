package recordio

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// structureStart maps every byte of a valid file to the offset of the
// structure (header, chunk, index, footer) that contains it.
func structureStart(t *testing.T, data []byte) []int64 {
	t.Helper()
	ix, err := ReadIndexFrom(bytes.NewReader(data), int64(len(data)), "mem")
	if err != nil {
		t.Fatal(err)
	}
	size := int64(len(data))
	footerOffset := size - footerSize
	indexOffset := footerOffset - int64(len(ix.Chunks)*indexEntrySize+crcSize)
	headerEnd := int64(headerFixedSize + len(ix.Meta) + crcSize)

	starts := make([]int64, len(data))
	for i := range starts {
		off := int64(i)
		switch {
		case off < headerEnd:
			starts[i] = 0
		case off >= footerOffset:
			starts[i] = footerOffset
		case off >= indexOffset:
			starts[i] = indexOffset
		default:
			starts[i] = -1
			for _, c := range ix.Chunks {
				if off >= c.Offset && off < c.Offset+int64(c.Length) {
					starts[i] = c.Offset
				}
			}
			if starts[i] < 0 {
				t.Fatalf("byte %d belongs to no structure", i)
			}
		}
	}
	return starts
}

func smallFile(t *testing.T) []byte {
	records := [][]byte{[]byte("alpha"), {}, []byte("gamma"), []byte("d"), []byte("epsilon")}
	return encode(t, []byte(`{"features":1}`), 2, records)
}

func TestEveryFlippedByteIsReported(t *testing.T) {
	data := smallFile(t)
	starts := structureStart(t, data)
	dir := t.TempDir()
	for _, mask := range []byte{0x01, 0x80, 0xff} {
		for i := range data {
			damaged := bytes.Clone(data)
			damaged[i] ^= mask
			path := writeTemp(t, dir, fmt.Sprintf("flip-%d-%02x", i, mask), damaged)

			_, err := Verify(path)
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Errorf("byte %d ^ %#02x: Verify = %v, want a *CorruptError", i, mask, err)
				continue
			}
			if !IsDamaged(err) {
				t.Errorf("byte %d ^ %#02x: %v is neither ErrCorrupt nor ErrTruncated", i, mask, err)
			}
			if ce.File != path {
				t.Errorf("byte %d ^ %#02x: error names file %q, want %q", i, mask, ce.File, path)
			}
			if ce.Offset != starts[i] {
				t.Errorf("byte %d ^ %#02x: error at offset %d, want %d (start of the damaged structure): %v", i, mask, ce.Offset, starts[i], err)
			}
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("%s: offset %d: ", path, ce.Offset)) {
				t.Errorf("error text %q does not start with FILE: offset N:", err)
			}
		}
	}
}

func TestEveryTruncationIsReported(t *testing.T) {
	data := smallFile(t)
	dir := t.TempDir()
	for n := range len(data) {
		path := writeTemp(t, dir, fmt.Sprintf("cut-%d", n), data[:n])
		if _, err := ReadIndex(path); !IsDamaged(err) {
			t.Errorf("cut at %d: ReadIndex = %v, want ErrTruncated or ErrCorrupt", n, err)
		}
		if _, err := Verify(path); !IsDamaged(err) {
			t.Errorf("cut at %d: Verify = %v, want ErrTruncated or ErrCorrupt", n, err)
		}
	}
	// Cutting off the footer is reported as truncation specifically.
	path := writeTemp(t, dir, "no-footer", data[:len(data)-1])
	if _, err := ReadIndex(path); !errors.Is(err, ErrTruncated) {
		t.Errorf("file missing its last byte: %v, want ErrTruncated", err)
	}
}

func TestChunkOfTruncatedFile(t *testing.T) {
	data := smallFile(t)
	dir := t.TempDir()
	ix, err := ReadIndexFrom(bytes.NewReader(data), int64(len(data)), "mem")
	if err != nil {
		t.Fatal(err)
	}
	last := ix.Chunks[len(ix.Chunks)-1]
	path := writeTemp(t, dir, "cut", data[:last.Offset+int64(last.Length)-1])
	_, err = ReadChunk(path, last)
	var ce *CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, ErrTruncated) || ce.Offset != last.Offset {
		t.Errorf("ReadChunk of a cut chunk = %v, want ErrTruncated at offset %d", err, last.Offset)
	}
}

func TestTrailingGarbageIsReported(t *testing.T) {
	data := append(smallFile(t), "garbage"...)
	path := writeTemp(t, t.TempDir(), "garbage", data)
	if _, err := ReadIndex(path); !IsDamaged(err) {
		t.Errorf("ReadIndex with trailing bytes = %v, want an error", err)
	}
}

func TestNotARecordFile(t *testing.T) {
	path := writeTemp(t, t.TempDir(), "text", []byte("this is a text file, not a record file at all\n"))
	_, err := ReadIndex(path)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "not a gtrain record file") {
		t.Errorf("ReadIndex(text) = %v, want ErrCorrupt saying it is not a record file", err)
	}
}

func TestUnknownVersion(t *testing.T) {
	data := encode(t, nil, 1, nil)
	le.PutUint16(data[4:6], Version+1)
	headerEnd := headerFixedSize + crcSize
	le.PutUint32(data[headerEnd-crcSize:], crc32Castagnoli(data[:headerEnd-crcSize]))
	path := writeTemp(t, t.TempDir(), "v2", data)
	_, err := ReadIndex(path)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("ReadIndex(version 2) = %v, want an error naming the version", err)
	}
}

func TestCorruptErrorUnwrapDefaultsToErrCorrupt(t *testing.T) {
	err := error(&CorruptError{File: "f", Offset: 7, Reason: "bad"})
	if !errors.Is(err, ErrCorrupt) || errors.Is(err, ErrTruncated) {
		t.Errorf("zero Err should unwrap to ErrCorrupt only")
	}
	if got, want := err.Error(), "f: offset 7: bad"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if IsDamaged(os.ErrNotExist) {
		t.Error("IsDamaged(os.ErrNotExist) = true")
	}
}
