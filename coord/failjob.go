package coord

import (
	"context"
	"log/slog"

	"github.com/gtrain/gtrain/api"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// FailJob marks the job FAILED with reason and records reason as an event:
// what a role does when no restart can help (a user's model program that
// fails, for one). Errors are logged, not returned: the caller exits with
// its own error either way.
func FailJob(ctx context.Context, cli *clientv3.Client, job, reason string, log *slog.Logger, guards ...clientv3.Cmp) {
	if _, err := SetJobState(ctx, cli, job, api.StateFailed, reason, guards...); err != nil {
		log.Error("could not fail the job", "err", err)
	}
	if err := AppendEvent(ctx, cli, job, reason); err != nil {
		log.Warn("cannot record job event", "err", err)
	}
}
