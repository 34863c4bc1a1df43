package recordio

import (
	"errors"
	"fmt"
)

var (
	// ErrCorrupt: the file's bytes contradict its own checksums or structure.
	ErrCorrupt = errors.New("recordio: corrupt record file")
	// ErrTruncated: the file ends before a structure it must contain.
	ErrTruncated = errors.New("recordio: truncated record file")

	// ErrClosed: Write or Close after Close, or after a failed write.
	ErrClosed = errors.New("recordio: writer closed")
	// ErrRecordTooLarge: a record does not fit in a chunk of the format.
	ErrRecordTooLarge = errors.New("recordio: record too large")
	// ErrInvalidArgument: a caller passed a value the format cannot represent.
	ErrInvalidArgument = errors.New("recordio: invalid argument")
	// ErrNoChunk: a chunk number outside the index.
	ErrNoChunk = errors.New("recordio: no such chunk")
)

// CorruptError locates damage in a record file. Offset is the start of the
// damaged structure (header, chunk, index or footer), not necessarily of the
// damaged byte.
type CorruptError struct {
	File   string
	Offset int64
	Reason string
	// Err is ErrCorrupt or ErrTruncated; nil means ErrCorrupt.
	Err error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s: offset %d: %s", e.File, e.Offset, e.Reason)
}

// Unwrap returns ErrCorrupt or ErrTruncated.
func (e *CorruptError) Unwrap() error {
	if e.Err == nil {
		return ErrCorrupt
	}
	return e.Err
}

// IsDamaged reports whether err says the file is corrupt or truncated, the two
// ways a record file can be unfit to train on.
func IsDamaged(err error) bool {
	return errors.Is(err, ErrCorrupt) || errors.Is(err, ErrTruncated)
}

func corrupt(file string, offset int64, format string, args ...any) error {
	return &CorruptError{File: file, Offset: offset, Reason: fmt.Sprintf(format, args...), Err: ErrCorrupt}
}

func truncated(file string, offset int64, format string, args ...any) error {
	return &CorruptError{File: file, Offset: offset, Reason: fmt.Sprintf(format, args...), Err: ErrTruncated}
}
