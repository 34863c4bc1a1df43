package recordio

import (
	"fmt"
	"io"
)

// ReadChunk opens path and reads the chunk c (as listed by an Index),
// verifying its checksum.
func ReadChunk(path string, c ChunkInfo) ([][]byte, error) {
	f, size, err := openSized(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := checkChunkInfo(c, path); err != nil {
		return nil, err
	}
	if end := c.Offset + int64(c.Length); end > size {
		return nil, truncated(path, c.Offset, "chunk of %d bytes needs the file to reach offset %d, it is %d bytes", c.Length, end, size)
	}
	return readChunk(f, path, c)
}

// ReadChunk reads chunk i of the indexed file from r, verifying its checksum
// and that it matches the index.
func (ix *Index) ReadChunk(r io.ReaderAt, i int) ([][]byte, error) {
	if i < 0 || i >= len(ix.Chunks) {
		return nil, fmt.Errorf("%w: %s: chunk %d, the file has %d", ErrNoChunk, ix.Path, i, len(ix.Chunks))
	}
	return readChunk(r, ix.Path, ix.Chunks[i])
}

// Verify reads every chunk of the file and checks every checksum. It returns
// the index whenever the index itself could be read, even with an error from
// a chunk.
func Verify(path string) (*Index, error) {
	f, size, err := openSized(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ix, err := ReadIndexFrom(f, size, path)
	if err != nil {
		return nil, err
	}
	for i := range ix.Chunks {
		if _, err := ix.ReadChunk(f, i); err != nil {
			return ix, err
		}
	}
	return ix, nil
}

func checkChunkInfo(c ChunkInfo, name string) error {
	if c.Offset < 0 || c.Records < 0 || c.Length < ChunkHeaderSize || uint64(c.Length) > maxChunkLength {
		return fmt.Errorf("%w: %s: chunk info %+v is not a chunk of this format", ErrInvalidArgument, name, c)
	}
	return nil
}

// readChunk returns the records as sub-slices of one buffer, each capped so
// that appending to one cannot overwrite the next.
func readChunk(r io.ReaderAt, name string, c ChunkInfo) ([][]byte, error) {
	if err := checkChunkInfo(c, name); err != nil {
		return nil, err
	}
	buf := make([]byte, c.Length)
	if err := readFull(r, buf, c.Offset, name, "chunk"); err != nil {
		return nil, err
	}
	if string(buf[:4]) != chunkMagic {
		return nil, corrupt(name, c.Offset, "bad chunk magic %q, want %q", buf[:4], chunkMagic)
	}
	records := int64(le.Uint32(buf[4:8]))
	payloadLength := int64(le.Uint32(buf[8:12]))
	if records != int64(c.Records) || payloadLength+ChunkHeaderSize != int64(c.Length) {
		return nil, corrupt(name, c.Offset, "chunk header says %d records in %d payload bytes, the index says %d in %d",
			records, payloadLength, c.Records, c.Length-ChunkHeaderSize)
	}
	payload := buf[ChunkHeaderSize:]
	if stored, computed := le.Uint32(buf[12:16]), chunkCRC(buf, payload); stored != computed {
		return nil, corrupt(name, c.Offset, "chunk checksum mismatch (stored %08x, computed %08x)", stored, computed)
	}

	out := make([][]byte, 0, records)
	pos := int64(0)
	for n := range records {
		if pos+recordLengthSize > payloadLength {
			return nil, corrupt(name, c.Offset, "record %d: length prefix at payload byte %d runs past the payload of %d", n, pos, payloadLength)
		}
		length := int64(le.Uint32(payload[pos:]))
		pos += recordLengthSize
		if length > payloadLength-pos {
			return nil, corrupt(name, c.Offset, "record %d: %d bytes at payload byte %d run past the payload of %d", n, length, pos, payloadLength)
		}
		out = append(out, payload[pos:pos+length:pos+length])
		pos += length
	}
	if pos != payloadLength {
		return nil, corrupt(name, c.Offset, "%d records end at payload byte %d, the payload has %d", records, pos, payloadLength)
	}
	return out, nil
}
