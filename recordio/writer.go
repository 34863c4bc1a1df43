package recordio

import (
	"fmt"
	"io"
	"math"
)

// Writer writes one record file to an io.Writer, streaming: only the current
// chunk and the index are held in memory.
type Writer struct {
	w            io.Writer
	chunkRecords int

	offset  int64 // bytes written so far
	payload []byte
	records int // records in the current chunk
	chunks  []ChunkInfo

	// err is sticky: once a write failed, the output is unusable.
	err    error
	closed bool
}

// NewWriter writes the file header (with meta, opaque to this package) and
// returns a Writer that groups records into chunks of chunkRecords.
func NewWriter(w io.Writer, meta []byte, chunkRecords int) (*Writer, error) {
	if chunkRecords < 1 {
		return nil, fmt.Errorf("%w: chunkRecords is %d, must be at least 1", ErrInvalidArgument, chunkRecords)
	}
	if uint64(len(meta)) > math.MaxUint32-headerFixedSize-crcSize-crcSize-footerSize {
		return nil, fmt.Errorf("%w: meta is %d bytes, more than a u32 length can hold", ErrInvalidArgument, len(meta))
	}
	header := make([]byte, 0, headerFixedSize+len(meta)+crcSize)
	header = append(header, headerMagic...)
	header = le.AppendUint16(header, Version)
	header = le.AppendUint32(header, uint32(len(meta)))
	header = append(header, meta...)
	header = le.AppendUint32(header, crc32Castagnoli(header))

	rw := &Writer{w: w, chunkRecords: chunkRecords}
	if err := rw.write(header); err != nil {
		return nil, err
	}
	return rw, nil
}

// Write appends one record. The record is copied; the caller may reuse it.
func (w *Writer) Write(record []byte) error {
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	need := uint64(recordLengthSize + len(record))
	if need > maxChunkLength-ChunkHeaderSize {
		return fmt.Errorf("%w: record is %d bytes, a chunk holds at most %d", ErrRecordTooLarge, len(record), maxChunkLength-ChunkHeaderSize-recordLengthSize)
	}
	if w.records > 0 && uint64(ChunkHeaderSize+len(w.payload))+need > maxChunkLength {
		if err := w.flush(); err != nil {
			return err
		}
	}
	w.payload = le.AppendUint32(w.payload, uint32(len(record)))
	w.payload = append(w.payload, record...)
	w.records++
	if w.records == w.chunkRecords {
		return w.flush()
	}
	return nil
}

// Close writes the last chunk, the index and the footer. It does not close the
// underlying io.Writer.
func (w *Writer) Close() error {
	if w.closed {
		return ErrClosed
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	if w.records > 0 {
		if err := w.flush(); err != nil {
			return err
		}
	}
	indexOffset := w.offset
	index := make([]byte, 0, len(w.chunks)*indexEntrySize+crcSize)
	for _, c := range w.chunks {
		index = le.AppendUint64(index, uint64(c.Offset))
		index = le.AppendUint32(index, uint32(c.Records))
		index = le.AppendUint32(index, uint32(c.Length))
	}
	index = le.AppendUint32(index, crc32Castagnoli(index))

	footer := make([]byte, 0, footerSize)
	footer = le.AppendUint64(footer, uint64(indexOffset))
	footer = le.AppendUint32(footer, uint32(len(w.chunks)))
	footer = le.AppendUint32(footer, crc32Castagnoli(footer))
	footer = append(footer, footerMagic...)

	if err := w.write(index); err != nil {
		return err
	}
	return w.write(footer)
}

// Chunks lists the chunks written so far (all of them after Close).
func (w *Writer) Chunks() []ChunkInfo {
	return append([]ChunkInfo(nil), w.chunks...)
}

func (w *Writer) flush() error {
	if len(w.chunks) == math.MaxUint32 {
		w.err = fmt.Errorf("%w: more than %d chunks", ErrInvalidArgument, uint32(math.MaxUint32))
		return w.err
	}
	header := make([]byte, 0, ChunkHeaderSize)
	header = append(header, chunkMagic...)
	header = le.AppendUint32(header, uint32(w.records))
	header = le.AppendUint32(header, uint32(len(w.payload)))
	header = le.AppendUint32(header, chunkCRC(header, w.payload))

	info := ChunkInfo{Offset: w.offset, Records: w.records, Length: ChunkHeaderSize + len(w.payload)}
	if err := w.write(header); err != nil {
		return err
	}
	if err := w.write(w.payload); err != nil {
		return err
	}
	w.chunks = append(w.chunks, info)
	w.payload = w.payload[:0]
	w.records = 0
	return nil
}

func (w *Writer) write(b []byte) error {
	n, err := w.w.Write(b)
	w.offset += int64(n)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = fmt.Errorf("recordio: writing at offset %d: %w", w.offset, err)
		return w.err
	}
	return nil
}
