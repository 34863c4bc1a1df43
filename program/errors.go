package program

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every failure of a program wraps ErrProgram and one of
// the more precise ones.
var (
	ErrProgram    = errors.New("model program failed")
	ErrTimeout    = errors.New("no answer in time")
	ErrExited     = errors.New("program exited")
	ErrProtocol   = errors.New("protocol violation")
	ErrEntry      = errors.New("bad model.entry")
	ErrMismatch   = errors.New("declaration differs from the one recorded at submit")
	ErrProgramSet = errors.New("program reported an error")
)

// Error is a failed request to a program, with what the program last wrote
// to stderr.
type Error struct {
	Op     string // declare, gradient, evaluate, start
	Err    error  // wraps one of the sentinels
	Stderr string // tail of the program's stderr
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "model program: %s: %v", e.Op, e.Err)
	if s := strings.TrimSpace(e.Stderr); s != "" {
		fmt.Fprintf(&b, "; stderr: %s", s)
	}
	return b.String()
}

// Unwrap lets errors.Is see ErrProgram and the precise sentinel.
func (e *Error) Unwrap() []error { return []error{ErrProgram, e.Err} }

// IsProgramError reports whether err is the failure of a model program, which
// fails the job rather than the process (a restart meets the same program).
func IsProgramError(err error) bool { return errors.Is(err, ErrProgram) }
