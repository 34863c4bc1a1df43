package jobspec

import "errors"

var (
	// ErrInvalidSpec is wrapped by every rejection of a job spec (parse,
	// validation, data checks): the caller's cue for "rejected input".
	ErrInvalidSpec = errors.New("invalid job spec")
	// ErrInvalidName reports a job name that breaks the naming rule (docs/reference.md#job-names).
	ErrInvalidName = errors.New("invalid job name")
	// ErrInvalidInterval reports a checkpoint.every that is neither a positive
	// Go duration nor a positive step count.
	ErrInvalidInterval = errors.New("invalid checkpoint interval")
	// ErrInvalidWindow reports a restarts.window that is not a positive Go
	// duration of at most a day.
	ErrInvalidWindow = errors.New("invalid restart window")
	// ErrInvalidHungAfter reports a restarts.hung_after that is not a
	// positive Go duration of at most an hour.
	ErrInvalidHungAfter = errors.New("invalid restarts.hung_after")
	// ErrInvalidStragglerWait reports a stragglers.min_wait that is not a
	// positive duration of at most maxStragglerWait.
	ErrInvalidStragglerWait = errors.New("invalid stragglers.min_wait")
	// ErrInvalidMemory reports a memory quantity that cannot be read as bytes.
	ErrInvalidMemory = errors.New("invalid memory quantity")
	// ErrMemoryTooSmall reports a memory request that cannot hold what the
	// process keeps for the model's parameters.
	ErrMemoryTooSmall = errors.New("memory request too small for the model")
)

// FieldError rejects one field of a job spec, named by its YAML path
// ("optimizer.learning_rate", "model.hidden[1]"). It always matches
// ErrInvalidSpec with errors.Is, and also the sentinel of its cause when it
// has one (ErrInvalidName for "name", ErrInvalidInterval, ErrInvalidMemory, ErrMemoryTooSmall,
// model.ErrInvalidSpec, or whatever CheckData's injected functions returned).
type FieldError struct {
	Field string
	Msg   string
	cause error
}

func (e *FieldError) Error() string { return "job spec: " + e.Field + ": " + e.Msg }

// Unwrap returns ErrInvalidSpec.
func (e *FieldError) Unwrap() error { return ErrInvalidSpec }

// Is reports whether target is in the chain of the error that caused this
// rejection, so that the cause's sentinel stays checkable.
func (e *FieldError) Is(target error) bool {
	return e.cause != nil && errors.Is(e.cause, target)
}

func fieldError(field, msg string, cause error) *FieldError {
	return &FieldError{Field: field, Msg: msg, cause: cause}
}
