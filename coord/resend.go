package coord

import (
	"context"
	"errors"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/internal/retry"
)

// resendPolicy paces the resends of a fenced commit: an etcd cluster that
// lost a member answers again within its election and request timeouts
// (about 7 s for a dead leader), so 15 s covers one member's death.
var resendPolicy = retry.Policy{Initial: 100 * time.Millisecond, Multiplier: 2, Max: 2 * time.Second, MaxElapsed: 15 * time.Second}

// resendUnknown runs commit again while it fails with an outcome etcd left
// unknown: the member it went to died before answering ("connection reset",
// Unavailable), or the leader did ("request timed out, possibly due to
// previous leader failure"). Resending is safe for a fenced transaction of
// puts and deletes only: applied once or twice, it leaves the same keys,
// and its guard still refuses it once the leadership is gone. Any other
// error (a refused guard is no error) ends it at once.
func resendUnknown(ctx context.Context, commit func() error) error {
	return retry.Do(ctx, resendPolicy, func() error {
		err := commit()
		if err != nil && !unknownOutcome(err) {
			return retry.Permanent(err)
		}
		return err
	})
}

// unknownOutcome reports whether err leaves open whether a write applied
// because an etcd member went away: the errors etcd gives with gRPC's
// Unavailable code (a lost connection, a lost or changed leader, a request
// timed out for either).
func unknownOutcome(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return rpcCode(err) == codes.Unavailable
}

// rpcCode is the gRPC code of an etcd error (etcd's own, or the
// transport's), wherever it is in err's chain; codes.Unknown for others.
func rpcCode(err error) codes.Code {
	var etcdErr rpctypes.EtcdError
	if errors.As(err, &etcdErr) {
		return etcdErr.Code()
	}
	return status.Code(err)
}
