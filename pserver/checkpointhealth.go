package pserver

import (
	"errors"
	"fmt"
	"os"
)

// ckptHealth follows whether this pserver's checkpoint writes fail, so that
// a failure becomes one event and one status warning however many
// checkpoints it spoils, and its end is said once too.
type ckptHealth struct {
	cause   string // root cause of the current failure; "" while writes succeed
	warning string // what status shows while failing
}

// failed records that the checkpoint of step could not be written to dir.
// It returns the warning to publish and true when this is a new failure (the
// first, or another root cause than the last one's); false for a repeat.
func (h *ckptHealth) failed(name, dir string, step int64, err error) (string, bool) {
	cause := failureCause(err)
	if cause == h.cause {
		return h.warning, false
	}
	h.cause = cause
	h.warning = fmt.Sprintf("%s cannot write checkpoint step %d to %s: %s; training goes on, recovery will use older checkpoints",
		name, step, dir, cause)
	return h.warning, true
}

// failureCause says what failed without the paths and temp names the full
// error (in the log) repeats: "rename: file exists", "write: no space left
// on device".
func failureCause(err error) string {
	cause := rootCause(err).Error()
	var link *os.LinkError
	var path *os.PathError
	switch {
	case errors.As(err, &link):
		return link.Op + ": " + cause
	case errors.As(err, &path):
		return path.Op + ": " + cause
	}
	return cause
}

// succeeded records that the checkpoint of step was written and returns the
// event to append and true if writes were failing until now.
func (h *ckptHealth) succeeded(name string, step int64) (string, bool) {
	if h.cause == "" {
		return "", false
	}
	was := h.cause
	h.cause, h.warning = "", ""
	return fmt.Sprintf("%s writes checkpoints again (step %d); the failure was: %s", name, step, was), true
}

// rootCause is the innermost error of err's chain (the last of a joined
// list): "is a directory", "no space left on device", without the step or
// temp file name that make every attempt's message differ.
func rootCause(err error) error {
	for {
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			errs := u.Unwrap()
			if len(errs) == 0 {
				return err
			}
			err = errs[len(errs)-1]
		default:
			next := errors.Unwrap(err)
			if next == nil {
				return err
			}
			err = next
		}
	}
}
