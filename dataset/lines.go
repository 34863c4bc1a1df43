package dataset

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"strconv"
)

// maxLineBytes bounds a line of a text input (a longer one is refused, not
// buffered without end).
const maxLineBytes = 1 << 20

// eachLine calls fn with every non-blank line of the file at path (plain or
// gzip), numbered from 1, without its line ending; the bytes are as in the
// file, whatever their encoding. fn's error stops the reading.
func eachLine(path string, fn func(lineNo int, line []byte) error) error {
	r, err := openInput(path)
	if err != nil {
		return err
	}
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLineBytes)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := bytes.TrimRight(sc.Bytes(), "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := fn(lineNo, line); err != nil {
			return err
		}
	}
	switch err := sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Errorf("%w: %s:%d: line longer than %d bytes", ErrBadLine, path, lineNo+1, maxLineBytes)
	case errors.Is(err, ErrBadGzip):
		return fmt.Errorf("%w (reading line %d)", err, lineNo+1)
	case err != nil:
		return fmt.Errorf("dataset: %s:%d: %w", path, lineNo+1, err)
	}
	return nil
}

// HashID is the id of a categorical value of a field: FNV-1a (64 bits) of
// the bytes "field:value". Converters use it for text ids (MovieLens' gender,
// zip and genres; csv columns declared hash:NAME), so that the same value of
// the same field gets the same id in every conversion.
func HashID[T string | []byte](field string, value T) uint64 {
	h := fnv.New64a()
	_, _ = io.WriteString(h, field+":")
	_, _ = h.Write([]byte(value))
	return h.Sum64()
}

// parseID reads a decimal 64-bit unsigned id.
func parseID(b []byte, what string) (uint64, error) {
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %.40q is not a whole number in [0, 2^64)", what, b)
	}
	return id, nil
}

// parseNumber reads a finite float32.
func parseNumber(b []byte, what string) (float32, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("%s is missing (empty)", what)
	}
	v, err := strconv.ParseFloat(string(b), 32)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s %.40q is not a finite number", what, b)
	}
	return float32(v), nil
}
