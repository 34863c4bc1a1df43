package program

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every failure of a program wraps one of the precise
// ones, and ErrProgram unless it is ErrExited.
var (
	// ErrProgram marks what fails the job: a wrong answer, an error answer,
	// a hang; a restart would meet the same program.
	ErrProgram = errors.New("model program failed")
	// ErrExited is a program that died before answering: killed by a
	// signal (the OOM killer) or exited. It is a crash of the role, which
	// restarts against the job's crash budget, like any crashed role.
	ErrExited     = errors.New("program exited")
	ErrTimeout    = errors.New("no answer in time")
	ErrRecords    = errors.New("bad records")
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

// Unwrap lets errors.Is see the precise sentinel, and ErrProgram for every
// failure but a death (ErrExited).
func (e *Error) Unwrap() []error {
	if errors.Is(e.Err, ErrExited) {
		return []error{e.Err}
	}
	return []error{ErrProgram, e.Err}
}

// IsProgramError reports whether err is the failure of a model program, which
// fails the job rather than the process (a restart meets the same program).
func IsProgramError(err error) bool { return errors.Is(err, ErrProgram) }

// IsCrash reports whether err is a program's death before it answered: the
// role ends with it and its agent restarts it within the crash budget.
func IsCrash(err error) bool { return errors.Is(err, ErrExited) }
