package checkpoint

import (
	"errors"
	"io/fs"
)

// Unusable reports whether err says a checkpoint file cannot be loaded
// (missing, damaged, or not the file its record names), as opposed to a
// failure to reach the records or the disk: a caller may then try an older
// recorded checkpoint.
func Unusable(err error) bool {
	return errors.Is(err, ErrCorrupt) || errors.Is(err, ErrNotRecorded) || errors.Is(err, fs.ErrNotExist)
}

var (
	// ErrNoCheckpoint means there is neither a record nor a checkpoint file for
	// this pserver index: starting from scratch is correct.
	ErrNoCheckpoint = errors.New("checkpoint: no checkpoint exists")

	// ErrCheckpointLost means a checkpoint was recorded (or files exist) but none
	// of them can be loaded: the caller must not re-initialise silently.
	ErrCheckpointLost = errors.New("checkpoint: recorded checkpoint is lost and no valid older one exists")

	// ErrCorrupt means a checkpoint file or record does not verify.
	ErrCorrupt = errors.New("checkpoint: corrupt checkpoint")

	// ErrNotRecorded means a checkpoint file is not the one its record names:
	// its sha256 differs from the recorded one, or nothing records it. Such
	// a file is never loaded, however well it decodes.
	ErrNotRecorded = errors.New("checkpoint: file does not match its record")

	// ErrConflict means the record changed since this writer last saw it
	// (another writer for the same index, or a failed fencing guard).
	ErrConflict = errors.New("checkpoint: record changed concurrently")

	// ErrInvalidConfig means a Config field is out of range.
	ErrInvalidConfig = errors.New("checkpoint: invalid config")

	// ErrInvalidSnapshot means a Snapshot handed to Save cannot be stored.
	ErrInvalidSnapshot = errors.New("checkpoint: invalid snapshot")
)
