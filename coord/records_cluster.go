package coord

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gtrain/gtrain/coord/schema"
)

// CommitPlacement writes a job's placement, and events about it, if this
// scheduler still leads and the job is still the one whose record was
// created at fence (not purged, nor purged and submitted again). It
// returns ErrFenced otherwise. The job then keeps its newest MaxJobEvents,
// as after AppendEvent.
func CommitPlacement(ctx context.Context, lead *Leadership, job string, fence int64, rec schema.PlacementRecord, events []string) error {
	sameJob := clientv3.Compare(clientv3.CreateRevision(JobKey(job)), "=", fence)
	err := lead.commitWithEvents(ctx, job, []clientv3.Cmp{sameJob}, events,
		[]clientv3.Op{clientv3.OpPut(PlacementKey(job), MustJSON(rec))})
	if errors.Is(err, ErrFenced) {
		return fmt.Errorf("write placement of job %s: leadership lost or job replaced: %w", job, ErrFenced)
	}
	if err != nil {
		return fmt.Errorf("write placement of job %s: %w", job, err)
	}
	return nil
}
