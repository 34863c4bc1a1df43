package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"math"
)

// File layout (all integers little-endian):
//
//	content:
//	  magic     [8]byte  "GTCKPT\x00\x03" (last byte = format version)
//	  jobLen    uint32, job [jobLen]byte   (Identity.Job)
//	  rev       uint64                     (Identity.Rev)
//	  index     uint64
//	  step      uint64
//	  base      uint64                     (Snapshot.Base; version 3 on)
//	  baseSHA   [32]byte                   (Snapshot.BaseSHA, zero without a base; version 3 on)
//	  metaLen   uint32, meta [metaLen]byte
//	  sections  uint32
//	  per section: nameLen uint32, name [nameLen]byte, count uint64, data [count]float32
//	trailer (not hashed):
//	  contentLen uint64   (bytes of content; detects truncation and appended garbage)
//	  sha256     [32]byte (of content)
//	  magic      [8]byte  "GTCKEND\x00"
//
// The trailer sits at the end so the writer can stream and hash in one pass.
// Version 1 had no identity; its files are not read (their names carry no
// identity either, so no Store ever lists them). Version 2 had no base; its
// files are read as self-contained (Base 0). base sits before meta so that
// prune reads it from the first bytes of a file (readBase).
const (
	fileMagic    = "GTCKPT\x00\x03"
	fileMagicV2  = "GTCKPT\x00\x02"
	trailerMagic = "GTCKEND\x00"
	trailerSize  = 8 + sha256.Size + 8
	headerSize   = 8 + 4 + 8 + 8 + 8 + 4 + 4 // without job name and meta
	sectionFixed = 4 + 8                     // nameLen + count, without name and data

	maxNameLen = 1 << 12
	maxMetaLen = 64 << 20

	writeBufferSize = 1 << 20
	chunkBytes      = 64 << 10
)

// contentWriter hashes and counts everything it forwards to the buffered file.
type contentWriter struct {
	w       *bufio.Writer
	h       hash.Hash
	n       int64
	scratch []byte
	piece   []float32 // floats read from a SectionSource, allocated once per file
}

func (c *contentWriter) write(p []byte) error {
	c.h.Write(p)
	if _, err := c.w.Write(p); err != nil {
		return err
	}
	c.n += int64(len(p))
	return nil
}

func (c *contentWriter) writeUint32(v uint32) error {
	return c.write(binary.LittleEndian.AppendUint32(c.scratch[:0], v))
}

func (c *contentWriter) writeUint64(v uint64) error {
	return c.write(binary.LittleEndian.AppendUint64(c.scratch[:0], v))
}

func (c *contentWriter) writeFloats(data []float32) error {
	perChunk := len(c.scratch) / 4
	for len(data) > 0 {
		n := min(len(data), perChunk)
		buf := c.scratch[:0]
		for _, v := range data[:n] {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
		if err := c.write(buf); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// writeSection writes sec's floats, from Data or a piece at a time from
// its Source.
func (c *contentWriter) writeSection(sec Section) error {
	if sec.Source == nil {
		return c.writeFloats(sec.Data)
	}
	if c.piece == nil {
		c.piece = make([]float32, len(c.scratch)/4)
	}
	piece := c.piece
	for off, n := 0, sec.Source.Len(); off < n; {
		got := sec.Source.ReadFloats(piece[:min(len(piece), n-off)], off)
		if got == 0 {
			return fmt.Errorf("section source ended at %d of %d floats", off, n)
		}
		if err := c.writeFloats(piece[:got]); err != nil {
			return err
		}
		off += got
	}
	return nil
}

// encodeSnapshot streams snap to w and returns the sha256 of the content.
// ctx is checked between sections so a cancelled Save stops early.
func encodeSnapshot(ctx context.Context, w io.Writer, snap Snapshot) ([sha256.Size]byte, error) {
	var sum, baseSHA [sha256.Size]byte
	if snap.Base != 0 {
		b, err := hex.DecodeString(snap.BaseSHA)
		if err != nil || len(b) != sha256.Size {
			return sum, fmt.Errorf("%w: BaseSHA %q is not a hex sha256", ErrInvalidSnapshot, snap.BaseSHA)
		}
		copy(baseSHA[:], b)
	}
	c := &contentWriter{
		w:       bufio.NewWriterSize(w, writeBufferSize),
		h:       sha256.New(),
		scratch: make([]byte, chunkBytes),
	}
	err := c.write([]byte(fileMagic))
	if err == nil {
		err = c.writeUint32(uint32(len(snap.Identity.Job)))
	}
	if err == nil {
		err = c.write([]byte(snap.Identity.Job))
	}
	if err == nil {
		err = c.writeUint64(uint64(snap.Identity.Rev))
	}
	if err == nil {
		err = c.writeUint64(uint64(snap.Index))
	}
	if err == nil {
		err = c.writeUint64(uint64(snap.Step))
	}
	if err == nil {
		err = c.writeUint64(uint64(snap.Base))
	}
	if err == nil {
		err = c.write(baseSHA[:])
	}
	if err == nil {
		err = c.writeUint32(uint32(len(snap.Meta)))
	}
	if err == nil {
		err = c.write(snap.Meta)
	}
	if err == nil {
		err = c.writeUint32(uint32(len(snap.Sections)))
	}
	if err != nil {
		return sum, fmt.Errorf("writing header: %w", err)
	}
	for _, sec := range snap.Sections {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		err := c.writeUint32(uint32(len(sec.Name)))
		if err == nil {
			err = c.write([]byte(sec.Name))
		}
		if err == nil {
			err = c.writeUint64(uint64(sec.Len()))
		}
		if err == nil {
			err = c.writeSection(sec)
		}
		if err != nil {
			return sum, fmt.Errorf("writing section %q: %w", sec.Name, err)
		}
	}
	c.h.Sum(sum[:0])
	trailer := binary.LittleEndian.AppendUint64(make([]byte, 0, trailerSize), uint64(c.n))
	trailer = append(trailer, sum[:]...)
	trailer = append(trailer, trailerMagic...)
	if _, err := c.w.Write(trailer); err != nil {
		return sum, fmt.Errorf("writing trailer: %w", err)
	}
	if err := c.w.Flush(); err != nil {
		return sum, fmt.Errorf("flushing: %w", err)
	}
	return sum, nil
}

// contentReader hashes what it reads and refuses to read into the trailer, so
// a corrupted length field is reported instead of allocating or over-reading.
type contentReader struct {
	r       *bufio.Reader
	h       hash.Hash
	off     int64
	end     int64
	scratch []byte
}

func (c *contentReader) read(p []byte, what string) error {
	if left := c.end - c.off; int64(len(p)) > left {
		return fmt.Errorf("%w: %s at offset %d needs %d bytes, only %d left before the trailer", ErrCorrupt, what, c.off, len(p), left)
	}
	if _, err := io.ReadFull(c.r, p); err != nil {
		return fmt.Errorf("reading %s at offset %d: %w", what, c.off, err)
	}
	c.h.Write(p)
	c.off += int64(len(p))
	return nil
}

func (c *contentReader) readUint32(what string) (uint32, error) {
	b := c.scratch[:4]
	if err := c.read(b, what); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (c *contentReader) readUint64(what string) (uint64, error) {
	b := c.scratch[:8]
	if err := c.read(b, what); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (c *contentReader) readFloats(dst []float32, what string) error {
	perChunk := len(c.scratch) / 4
	for len(dst) > 0 {
		n := min(len(dst), perChunk)
		b := c.scratch[:4*n]
		if err := c.read(b, what); err != nil {
			return err
		}
		for i := range n {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		dst = dst[n:]
	}
	return nil
}

// decodeSnapshot reads a whole checkpoint file of the given size and verifies
// its trailer and checksum. Errors carry byte offsets; the caller adds the file name.
func decodeSnapshot(ra io.ReaderAt, size int64) (*Snapshot, [sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	if size < headerSize+trailerSize {
		return nil, sum, fmt.Errorf("%w: file is %d bytes (offset %d is its end), shorter than an empty checkpoint (%d); truncated", ErrCorrupt, size, size, headerSize+trailerSize)
	}
	trailer := make([]byte, trailerSize)
	if _, err := ra.ReadAt(trailer, size-trailerSize); err != nil {
		return nil, sum, fmt.Errorf("reading trailer at offset %d: %w", size-trailerSize, err)
	}
	if string(trailer[8+sha256.Size:]) != trailerMagic {
		return nil, sum, fmt.Errorf("%w: no trailer magic at offset %d; file truncated or not a checkpoint", ErrCorrupt, size-8)
	}
	contentLen := binary.LittleEndian.Uint64(trailer)
	if contentLen != uint64(size-trailerSize) {
		return nil, sum, fmt.Errorf("%w: trailer at offset %d says content is %d bytes but the file holds %d", ErrCorrupt, size-trailerSize, contentLen, size-trailerSize)
	}
	copy(sum[:], trailer[8:])

	c := &contentReader{
		r:       bufio.NewReaderSize(io.NewSectionReader(ra, 0, int64(contentLen)), writeBufferSize),
		h:       sha256.New(),
		end:     int64(contentLen),
		scratch: make([]byte, chunkBytes),
	}
	snap, err := decodeContent(c)
	if err != nil {
		return nil, sum, err
	}
	if got := c.h.Sum(nil); !bytes.Equal(got, sum[:]) {
		return nil, sum, fmt.Errorf("%w: content (offset 0 to %d) has sha256 %x but the trailer records %x", ErrCorrupt, contentLen, got, sum)
	}
	return snap, sum, nil
}

func decodeContent(c *contentReader) (*Snapshot, error) {
	magic := make([]byte, len(fileMagic))
	if err := c.read(magic, "magic"); err != nil {
		return nil, err
	}
	snap, err := decodeHead(c, magic)
	if err != nil {
		return nil, err
	}
	metaLen, err := c.readUint32("meta length")
	if err != nil {
		return nil, err
	}
	if metaLen > maxMetaLen {
		return nil, fmt.Errorf("%w: meta length %d at offset %d exceeds %d", ErrCorrupt, metaLen, c.off-4, maxMetaLen)
	}
	if int64(metaLen) > c.end-c.off {
		return nil, fmt.Errorf("%w: meta length %d at offset %d runs past the content (%d bytes left)", ErrCorrupt, metaLen, c.off-4, c.end-c.off)
	}
	if metaLen > 0 {
		snap.Meta = make([]byte, metaLen)
		if err := c.read(snap.Meta, "meta"); err != nil {
			return nil, err
		}
	}
	count, err := c.readUint32("section count")
	if err != nil {
		return nil, err
	}
	if int64(count) > (c.end-c.off)/sectionFixed {
		return nil, fmt.Errorf("%w: section count %d at offset %d cannot fit in the %d bytes left", ErrCorrupt, count, c.off-4, c.end-c.off)
	}
	snap.Sections = make([]Section, 0, count)
	for i := range count {
		sec, err := decodeSection(c, i)
		if err != nil {
			return nil, err
		}
		snap.Sections = append(snap.Sections, sec)
	}
	if c.off != c.end {
		return nil, fmt.Errorf("%w: %d unexplained bytes after the last section at offset %d", ErrCorrupt, c.end-c.off, c.off)
	}
	return snap, nil
}

// decodeHead reads the header up to meta: identity, index, step and (version
// 3) base, which must name an earlier step.
func decodeHead(c *contentReader, magic []byte) (*Snapshot, error) {
	if string(magic) != fileMagic && string(magic) != fileMagicV2 {
		return nil, fmt.Errorf("%w: bad magic %q at offset 0 (want %q)", ErrCorrupt, magic, fileMagic)
	}
	id, err := decodeIdentity(c)
	if err != nil {
		return nil, err
	}
	index, err := c.readUint64("index")
	if err != nil {
		return nil, err
	}
	step, err := c.readUint64("step")
	if err != nil {
		return nil, err
	}
	if index > math.MaxInt32 || step > math.MaxInt64 {
		return nil, fmt.Errorf("%w: header index %d / step %d at offset %d out of range", ErrCorrupt, index, step, c.off-16)
	}
	snap := &Snapshot{Identity: id, Index: int(index), Step: int64(step)}
	if string(magic) == fileMagicV2 {
		return snap, nil
	}
	base, err := c.readUint64("base")
	if err != nil {
		return nil, err
	}
	if base >= step && base != 0 {
		return nil, fmt.Errorf("%w: base step %d at offset %d is not before the file's step %d", ErrCorrupt, base, c.off-8, step)
	}
	var sha [sha256.Size]byte
	if err := c.read(sha[:], "base sha256"); err != nil {
		return nil, err
	}
	if base != 0 {
		snap.Base, snap.BaseSHA = int64(base), hex.EncodeToString(sha[:])
	}
	return snap, nil
}

// decodeIdentity reads the job name and revision the file belongs to.
func decodeIdentity(c *contentReader) (Identity, error) {
	n, err := c.readUint32("job name length")
	if err != nil {
		return Identity{}, err
	}
	if n == 0 || n > maxJobLen {
		return Identity{}, fmt.Errorf("%w: job name length %d at offset %d is not in 1..%d", ErrCorrupt, n, c.off-4, maxJobLen)
	}
	job := make([]byte, n)
	if err := c.read(job, "job name"); err != nil {
		return Identity{}, err
	}
	rev, err := c.readUint64("job revision")
	if err != nil {
		return Identity{}, err
	}
	if rev < 1 || rev > math.MaxInt64 {
		return Identity{}, fmt.Errorf("%w: job revision %d at offset %d out of range", ErrCorrupt, rev, c.off-8)
	}
	return Identity{Job: string(job), Rev: int64(rev)}, nil
}

func decodeSection(c *contentReader, i uint32) (Section, error) {
	nameLen, err := c.readUint32(fmt.Sprintf("section %d name length", i))
	if err != nil {
		return Section{}, err
	}
	if nameLen == 0 || nameLen > maxNameLen {
		return Section{}, fmt.Errorf("%w: section %d name length %d at offset %d is not in 1..%d", ErrCorrupt, i, nameLen, c.off-4, maxNameLen)
	}
	name := make([]byte, nameLen)
	if err := c.read(name, fmt.Sprintf("section %d name", i)); err != nil {
		return Section{}, err
	}
	n, err := c.readUint64(fmt.Sprintf("section %q length", name))
	if err != nil {
		return Section{}, err
	}
	if left := c.end - c.off; n > uint64(left/4) {
		return Section{}, fmt.Errorf("%w: section %q claims %d floats at offset %d but only %d bytes are left", ErrCorrupt, name, n, c.off-8, left)
	}
	sec := Section{Name: string(name), Data: make([]float32, n)}
	if err := c.readFloats(sec.Data, fmt.Sprintf("section %q data", name)); err != nil {
		return Section{}, err
	}
	return sec, nil
}
