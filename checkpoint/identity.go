package checkpoint

import (
	"fmt"
	"strconv"
)

// Identity is the job a checkpoint belongs to: the job's name and the
// revision its record was created at in etcd. The name alone is not enough:
// a job purged with `gctl job stop --purge` leaves its files on shared
// storage, and a new job of the same name gets a new record, hence a new
// Rev, so it never loads or prunes the files of the old one. Two jobs that
// share a checkpoint directory differ by name.
type Identity struct {
	Job string
	Rev int64
}

// maxJobLen bounds the job name written in a file header (a job name has at
// most 63 characters; this leaves room without letting a damaged length
// field allocate much).
const maxJobLen = 255

// String is how an identity appears in messages: "fit-a-line (rev 42)".
func (id Identity) String() string { return id.Job + " (rev " + strconv.FormatInt(id.Rev, 10) + ")" }

// validate: the job name is part of every file name, so it is kept to
// characters safe in every file system; it has no '_', which separates it
// from the revision and the owner in a file name, and never starts with the
// temp files' dot.
func (id Identity) validate() error {
	if id.Rev < 1 {
		return fmt.Errorf("%w: Identity.Rev is %d; it must be the job record's create revision (>= 1)", ErrInvalidConfig, id.Rev)
	}
	if id.Job == "" || len(id.Job) > maxJobLen || id.Job[0] == '.' || id.Job[0] == '-' {
		return fmt.Errorf("%w: Identity.Job is %q; it must be a job name", ErrInvalidConfig, id.Job)
	}
	for _, r := range id.Job {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.'
		if !ok {
			return fmt.Errorf("%w: Identity.Job is %q; it must be letters, digits, '-' or '.'", ErrInvalidConfig, id.Job)
		}
	}
	return nil
}
