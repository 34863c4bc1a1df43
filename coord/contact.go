package coord

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
)

// ErrSessionLost reports that a process's etcd session (its lease) ended
// under it: it no longer holds what it claimed, and must stop acting.
var ErrSessionLost = errors.New("etcd session lost")

// LostContact reports whether err says a role lost contact with what it
// depends on, not that it failed by itself: etcd unreachable or without a
// leader, its lease gone, a fenced write, or a peer (its job's master)
// unavailable. A role ending with such an error is restarted without
// counting against its job's crash budget, so an etcd outage cannot fail a
// job by spending the budget.
func LostContact(err error) bool {
	switch {
	case err == nil || errors.Is(err, context.Canceled):
		return false
	case errors.Is(err, ErrSessionLost), errors.Is(err, ErrFenced), errors.Is(err, context.DeadlineExceeded):
		return true
	}
	c := rpcCode(err)
	return c == codes.Unavailable || c == codes.DeadlineExceeded
}
