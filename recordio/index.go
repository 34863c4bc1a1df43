package recordio

import (
	"fmt"
	"io"
	"os"
)

// ChunkInfo locates one chunk. Offset is the start of the chunk header; Length
// counts the chunk header and the payload, so Offset+Length is where the next
// chunk starts.
type ChunkInfo struct {
	Offset  int64
	Records int
	Length  int
}

// Index is what a reader learns from a file without reading its chunks.
type Index struct {
	Path   string
	Meta   []byte
	Chunks []ChunkInfo
}

// Records is the total number of records in the file.
func (ix *Index) Records() int {
	total := 0
	for _, c := range ix.Chunks {
		total += c.Records
	}
	return total
}

// ReadIndex reads the header, footer and index of the file at path, never the
// chunks.
func ReadIndex(path string) (*Index, error) {
	f, size, err := openSized(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadIndexFrom(f, size, path)
}

// ReadIndexFrom is ReadIndex over any io.ReaderAt of the given size; name is
// used in errors and as Index.Path.
func ReadIndexFrom(r io.ReaderAt, size int64, name string) (*Index, error) {
	if size >= int64(len(headerMagic)) {
		magic := make([]byte, len(headerMagic))
		if err := readFull(r, magic, 0, name, "header magic"); err != nil {
			return nil, err
		}
		if string(magic) != headerMagic {
			return nil, corrupt(name, 0, "bad header magic %q, want %q: not a gtrain record file", magic, headerMagic)
		}
	}
	if size < minFileSize {
		return nil, truncated(name, 0, "file is %d bytes, the smallest record file is %d", size, minFileSize)
	}

	// The footer first: when it is intact the file is complete, so anything
	// wrong before it is damage rather than truncation.
	footerOffset := size - footerSize
	footer := make([]byte, footerSize)
	if err := readFull(r, footer, footerOffset, name, "footer"); err != nil {
		return nil, err
	}
	if string(footer[16:]) != footerMagic {
		return nil, truncated(name, footerOffset, "no footer magic %q at the end: file truncated or footer damaged", footerMagic)
	}
	if stored, computed := le.Uint32(footer[12:16]), crc32Castagnoli(footer[:12]); stored != computed {
		return nil, corrupt(name, footerOffset, "footer checksum mismatch (stored %08x, computed %08x)", stored, computed)
	}
	indexOffset := le.Uint64(footer[0:8])
	chunkCount := int64(le.Uint32(footer[8:12]))

	meta, headerEnd, err := readHeader(r, name, footerOffset)
	if err != nil {
		return nil, err
	}

	indexLength := chunkCount*indexEntrySize + crcSize
	if indexOffset > uint64(footerOffset) || int64(indexOffset)+indexLength != footerOffset || int64(indexOffset) < headerEnd {
		return nil, corrupt(name, footerOffset, "footer says index at offset %d with %d chunks, which does not end where the footer starts", indexOffset, chunkCount)
	}
	index := make([]byte, indexLength)
	if err := readFull(r, index, int64(indexOffset), name, "index"); err != nil {
		return nil, err
	}
	entries := index[:len(index)-crcSize]
	if stored, computed := le.Uint32(index[len(entries):]), crc32Castagnoli(entries); stored != computed {
		return nil, corrupt(name, int64(indexOffset), "index checksum mismatch (stored %08x, computed %08x)", stored, computed)
	}

	chunks, err := decodeIndex(entries, name, headerEnd, int64(indexOffset))
	if err != nil {
		return nil, err
	}
	return &Index{Path: name, Meta: meta, Chunks: chunks}, nil
}

// readHeader returns the meta bytes and the offset where the header ends.
// limit is where the footer starts; the header must end before it with room
// for an index.
func readHeader(r io.ReaderAt, name string, limit int64) ([]byte, int64, error) {
	fixed := make([]byte, headerFixedSize)
	if err := readFull(r, fixed, 0, name, "header"); err != nil {
		return nil, 0, err
	}
	metaLength := int64(le.Uint32(fixed[6:10]))
	headerEnd := headerFixedSize + metaLength + crcSize
	if headerEnd+crcSize > limit {
		return nil, 0, corrupt(name, 0, "header says %d bytes of meta, which run past the index", metaLength)
	}
	rest := make([]byte, metaLength+crcSize)
	if err := readFull(r, rest, headerFixedSize, name, "header"); err != nil {
		return nil, 0, err
	}
	meta := rest[:metaLength:metaLength]
	crc := crc32Castagnoli(fixed)
	crc = crc32Update(crc, meta)
	if stored := le.Uint32(rest[metaLength:]); stored != crc {
		return nil, 0, corrupt(name, 0, "header checksum mismatch (stored %08x, computed %08x)", stored, crc)
	}
	if version := le.Uint16(fixed[4:6]); version != Version {
		return nil, 0, corrupt(name, 0, "format version %d, this reader knows version %d", version, Version)
	}
	return meta, headerEnd, nil
}

// decodeIndex checks that the chunks tile the space between the header and the
// index exactly; with a valid index checksum a failure here means the file was
// not written by this package.
func decodeIndex(entries []byte, name string, headerEnd, indexOffset int64) ([]ChunkInfo, error) {
	chunks := make([]ChunkInfo, 0, len(entries)/indexEntrySize)
	next := headerEnd
	for i := 0; i < len(entries); i += indexEntrySize {
		entryOffset := indexOffset + int64(i)
		offset := le.Uint64(entries[i:])
		records := int64(le.Uint32(entries[i+8:]))
		length := int64(le.Uint32(entries[i+12:]))
		n := i / indexEntrySize
		switch {
		case offset != uint64(next):
			return nil, corrupt(name, entryOffset, "index entry %d: chunk at offset %d, want %d (where the previous section ends)", n, offset, next)
		case length < ChunkHeaderSize || next+length > indexOffset:
			return nil, corrupt(name, entryOffset, "index entry %d: chunk length %d does not fit between offset %d and the index at %d", n, length, offset, indexOffset)
		case records*recordLengthSize > length-ChunkHeaderSize:
			return nil, corrupt(name, entryOffset, "index entry %d: %d records cannot fit in %d payload bytes", n, records, length-ChunkHeaderSize)
		}
		chunks = append(chunks, ChunkInfo{Offset: next, Records: int(records), Length: int(length)})
		next += length
	}
	if next != indexOffset {
		return nil, corrupt(name, indexOffset, "chunks end at offset %d but the index starts at %d", next, indexOffset)
	}
	return chunks, nil
}

func openSized(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("recordio: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("recordio: %w", err)
	}
	return f, st.Size(), nil
}

// readFull reads len(b) bytes at off; running out of file is truncation, any
// other failure an I/O error that is not the file's fault.
func readFull(r io.ReaderAt, b []byte, off int64, name, what string) error {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
		return truncated(name, off, "%s needs %d bytes, the file ends after %d", what, len(b), n)
	}
	return fmt.Errorf("recordio: %s: reading %s at offset %d: %w", name, what, off, err)
}
