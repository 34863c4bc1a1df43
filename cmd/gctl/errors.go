package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/jobspec"
)

// Exit codes of docs/reference.md#exit-codes.
const (
	exitOK       = 0
	exitFailure  = 1
	exitRejected = 2
)

var (
	// ErrUsage marks a command line gctl refuses: bad flag, missing or extra
	// argument, unknown command, flag value out of range.
	ErrUsage = errors.New("invalid usage")
	// ErrConfig marks a client configuration file that cannot be used.
	ErrConfig = errors.New("invalid gctl config")
	// ErrJobNotSucceeded marks a monitored job that ended FAILED or STOPPED.
	ErrJobNotSucceeded = errors.New("job did not succeed")
	// ErrNotSupported marks a command that exists but is not implemented yet.
	ErrNotSupported = errors.New("not supported yet")
	// ErrBadDocument marks an agent answer gctl cannot decode.
	ErrBadDocument = errors.New("malformed document from the agent")
	// ErrInterrupted marks a command cut short by Ctrl-C.
	ErrInterrupted = errors.New("interrupted")
)

// exitCode is the one place that decides how gctl ends for an error.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	for _, rejected := range []error{
		ErrUsage, ErrConfig,
		jobspec.ErrInvalidSpec, jobspec.ErrInvalidName,
		// data convert input that cannot be converted
		dataset.ErrBadOptions, dataset.ErrBadLine, dataset.ErrBadIDX, dataset.ErrNoRecords,
		dataset.ErrBadGzip, dataset.ErrBadStats, dataset.ErrStatsMismatch, dataset.ErrOtherSet,
	} {
		if errors.Is(err, rejected) {
			return exitRejected
		}
	}
	if _, ok := status.FromError(err); ok {
		switch status.Code(err) {
		case codes.InvalidArgument, codes.NotFound, codes.AlreadyExists:
			return exitRejected
		}
	}
	return exitFailure
}

// usageError is a rejected command line. Its message is shown as is; the
// type only makes it errors.Is(err, ErrUsage).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func (e *usageError) Is(target error) bool { return target == ErrUsage }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// agentError is a failed call to the agent. It keeps the gRPC status for
// exitCode and turns it into a message that says what to do next.
type agentError struct {
	op   string // what gctl was doing, e.g. `get job "fit-a-line"`
	addr string // the agent's address
	from string // where the address came from, e.g. "--addr"
	err  error
}

func (e *agentError) Unwrap() error { return e.err }

// GRPCStatus lets status.FromError see through the wrapper without
// replacing the agent's message with ours.
func (e *agentError) GRPCStatus() *status.Status {
	st, _ := status.FromError(e.err)
	return st
}

func (e *agentError) Error() string {
	if errors.Is(e.err, context.Canceled) || status.Code(e.err) == codes.Canceled {
		return fmt.Sprintf("%s: interrupted", e.op)
	}
	st, ok := status.FromError(e.err)
	if !ok {
		return fmt.Sprintf("%s: %v", e.op, e.err)
	}
	msg := st.Message()
	switch st.Code() {
	case codes.Unavailable:
		return fmt.Sprintf("cannot reach the gtrain agent at %s%s: is `gtraind agent` running? (set --addr or GCTL_ADDR) [%s: %s]",
			e.addr, e.fromSuffix(), e.op, msg)
	case codes.DeadlineExceeded:
		return fmt.Sprintf("%s: the gtrain agent at %s%s did not answer in time; check that it is healthy (gctl node list) and retry",
			e.op, e.addr, e.fromSuffix())
	case codes.NotFound:
		if strings.Contains(e.op, " node ") {
			return fmt.Sprintf("%s: %s", e.op, msg) // the agent's message names gctl node list
		}
		return fmt.Sprintf("%s: %s (gctl job list shows the jobs the agent knows)", e.op, msg)
	case codes.AlreadyExists:
		return fmt.Sprintf("%s: %s (choose another --name, or free the name with `gctl job stop NAME --purge`)", e.op, msg)
	case codes.InvalidArgument:
		return fmt.Sprintf("%s: rejected by the agent: %s", e.op, msg)
	case codes.FailedPrecondition:
		return fmt.Sprintf("%s: %s", e.op, msg)
	case codes.Unimplemented:
		return fmt.Sprintf("%s: the agent at %s does not implement this call (%s); use a gctl of the same release as the agent", e.op, e.addr, msg)
	case codes.Unauthenticated:
		return fmt.Sprintf("%s: the agent at %s does not know who you are: %s (see the tls files and token of your context in --config)",
			e.op, e.addr, msg)
	case codes.PermissionDenied:
		return fmt.Sprintf("%s: %s", e.op, msg) // the agent's message names the role needed
	default:
		return fmt.Sprintf("%s: %s: %s", e.op, strings.ToLower(st.Code().String()), msg)
	}
}

func (e *agentError) fromSuffix() string {
	if e.from == "" {
		return ""
	}
	return " (from " + e.from + ")"
}

// decodeDocument reads an agent document into T; what names it in errors.
func decodeDocument[T any](doc *api.Document, what string) (T, error) {
	var v T
	if doc == nil || len(doc.GetJson()) == 0 {
		return v, fmt.Errorf("%w: the agent sent an empty %s", ErrBadDocument, what)
	}
	if err := json.Unmarshal(doc.GetJson(), &v); err != nil {
		return v, fmt.Errorf("%w: %s: %v (is the agent of the same release as gctl?)", ErrBadDocument, what, err)
	}
	return v, nil
}
