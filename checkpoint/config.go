package checkpoint

import "fmt"

// Config says where a Store keeps the checkpoints of one pserver.
type Config struct {
	// Dir holds the checkpoint files; shared storage for multi-node jobs.
	// Required: the caller derives it (e.g. <data-dir>/jobs/<name>/checkpoints).
	Dir string
	// Keep is how many checkpoint files of this index survive a Save (>= 1).
	Keep int
	// Index is the pserver index whose shard this Store checkpoints (>= 0).
	Index int
}

// DefaultConfig returns Keep 3 and Index 0. Dir is left empty on purpose: it
// depends on the job and must be set before Validate passes.
func DefaultConfig() Config {
	return Config{Keep: 3}
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
	}
	return nil
}
