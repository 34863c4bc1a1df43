// Package retry repeats an operation that fails for now: it waits an
// exponentially growing, jittered pause between attempts until the
// operation succeeds, fails permanently, the policy gives up or the context
// ends.
//
// It must not decide which errors are worth another attempt: the operation
// marks the others with Permanent.
package retry
