package controlapi

import (
	"bytes"
	"io"
)

const (
	lineChunk = 32 << 10 // bytes read at a time
	// maxLine bounds a line held back while waiting for its end; a longer
	// one is sent in pieces rather than buffered without limit.
	maxLine = 1 << 20
)

// copyLines reads r to its end and emits whole lines, several per call. An
// unfinished last line is held back, and not counted, unless flushPartial,
// in which case it is emitted with a newline added. It returns the bytes of
// r that were emitted. emit gets a fresh slice each time.
func copyLines(r io.Reader, emit func([]byte) error, flushPartial bool) (int64, error) {
	var consumed int64
	var pending []byte
	buf := make([]byte, lineChunk)
	for {
		k, rerr := r.Read(buf)
		pending = append(pending, buf[:k]...)
		if i := bytes.LastIndexByte(pending, '\n'); i >= 0 {
			if err := emit(bytes.Clone(pending[:i+1])); err != nil {
				return consumed, err
			}
			consumed += int64(i + 1)
			pending = append(pending[:0], pending[i+1:]...)
		} else if len(pending) >= maxLine {
			if err := emit(append(bytes.Clone(pending), '\n')); err != nil {
				return consumed, err
			}
			consumed += int64(len(pending))
			pending = pending[:0]
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return consumed, rerr
		}
	}
	if flushPartial && len(pending) > 0 {
		if err := emit(append(bytes.Clone(pending), '\n')); err != nil {
			return consumed, err
		}
		consumed += int64(len(pending))
	}
	return consumed, nil
}

// tailOffset is the offset where the last n lines of a file of size bytes
// start; an unfinished last line counts as a line.
func tailOffset(r io.ReaderAt, size int64, n int) (int64, error) {
	if n <= 0 || size == 0 {
		return 0, nil
	}
	end := size
	last := make([]byte, 1)
	if _, err := r.ReadAt(last, size-1); err != nil {
		return 0, err
	}
	if last[0] == '\n' {
		end-- // the final newline ends the last line; it separates nothing
	}
	buf := make([]byte, lineChunk)
	seen := 0
	for end > 0 {
		start := max(0, end-int64(len(buf)))
		block := buf[:end-start]
		if _, err := r.ReadAt(block, start); err != nil && err != io.EOF {
			return 0, err
		}
		for i := len(block) - 1; i >= 0; i-- {
			if block[i] == '\n' {
				seen++
				if seen == n {
					return start + int64(i) + 1, nil
				}
			}
		}
		end = start
	}
	return 0, nil
}
