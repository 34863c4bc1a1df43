package checkpoint

import (
	"context"
	"fmt"
)

// Config says where a Store keeps the checkpoints of one owner of one job.
type Config struct {
	// Identity is the job these checkpoints belong to; it is in every file
	// name and header, and a Store never touches files of another identity.
	// Required.
	Identity Identity
	// Dir holds the checkpoint files; shared storage for multi-node jobs.
	// Required: the caller derives it (jobdir.Checkpoints for a job's pservers).
	Dir string
	// Keep is how many checkpoint files of this owner survive a Save (>= 1),
	// besides those of the steps KeepSteps names.
	Keep int
	// KeepSteps, if set, names the steps whose files a Save must never
	// delete whatever Keep says: a sync job's kept global checkpoints, which
	// an owner may be far past when another owner's writes failed. An error
	// makes that Save delete nothing. The caller reads them (etcd's layout is
	// coord's).
	KeepSteps func(ctx context.Context) ([]int64, error)
	// StepRecord, if set, returns the sha256 recorded for this owner's
	// checkpoint of step outside the Recorder, which names only the newest
	// (in production the job's per-step checkpoint marks, whose layout is
	// coord's); found is false when nothing records that step. With it set,
	// Load and LoadStep load only a file whose sha256 matches a record: the
	// Recorder's or StepRecord's. Without it (tests, single-process use),
	// Load also tries files nothing records, on their own checksum.
	StepRecord func(ctx context.Context, step int64) (sha256 string, found bool, err error)
	// Index is the shard index these checkpoints hold (>= 0): the key of the
	// owner's record in the Recorder and the index written in every file.
	Index int
	// Owner names whose state these checkpoints hold and follows the
	// identity in every file name (<job>_r<rev>_<Owner>-step-<step>.ckpt),
	// e.g. "master". Empty means
	// "pserver-<Index>", the name pservers' checkpoints have always had.
	// Letters, digits, '-' and '_' only.
	Owner string
	// Paths reaches Dir and its files (nil: the plain file system); the
	// roles pass their job's confine.Roots.
	Paths Paths
}

// DefaultConfig returns Keep 3 and Index 0. Dir and Identity are left empty
// on purpose: they depend on the job and must be set before Validate passes.
func DefaultConfig() Config {
	return Config{Keep: 3}
}

// OwnerName is Owner, or the pserver owner of Index when Owner is empty.
func (c Config) OwnerName() string {
	if c.Owner == "" {
		return pserverOwner(c.Index)
	}
	return c.Owner
}

// Validate reports the first field that is out of range.
func (c Config) Validate() error {
	switch {
	case c.Dir == "":
		return fmt.Errorf("%w: Dir is empty; set it to the job's checkpoint directory", ErrInvalidConfig)
	case c.Keep < 1:
		return fmt.Errorf("%w: Keep is %d; it must be at least 1", ErrInvalidConfig, c.Keep)
	case c.Index < 0:
		return fmt.Errorf("%w: Index is %d; it must not be negative", ErrInvalidConfig, c.Index)
	case !validOwner(c.OwnerName()):
		return fmt.Errorf("%w: Owner is %q; it must be letters, digits, '-' or '_'", ErrInvalidConfig, c.Owner)
	}
	return c.Identity.validate()
}
