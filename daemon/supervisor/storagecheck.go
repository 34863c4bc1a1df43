package supervisor

import (
	"context"
	"errors"
	"slices"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/rolecfg"
	"github.com/gtrain/gtrain/jobspec"
)

// checkStorageLocked takes this node's part in the job's storage check,
// once per check, in the background.
func (s *Supervisor) checkStorageLocked(job string, e *jobEntry) {
	c := e.placement.Check
	if c == nil || !slices.Contains(c.Nodes, s.node) || s.checks[job] == c.Token {
		return
	}
	s.checks[job] = c.Token
	check, fence, spec := *c, e.fence, e.record.Spec
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.answerCheck(check, &spec, job, fence)
	}()
}

// answerCheck runs this node's part of check c and records the answer in
// etcd for the scheduler, unless the job was replaced meanwhile.
func (s *Supervisor) answerCheck(c schema.StorageCheck, spec *jobspec.Spec, job string, fence int64) {
	roots, err := rolecfg.JobRoots(s.roles.allowed, s.dataDir, spec)
	if err == nil {
		err = verifyStorage(s.ctx, roots, c, job, fence, s.node, markerWait)
	}
	if s.ctx.Err() != nil {
		return
	}
	res := schema.StorageResult{Token: c.Token, Node: s.node, OK: err == nil}
	if err != nil {
		res.Error = err.Error()
		s.log.Warn("checkpoint.dir is not shared storage", "job", job, "dir", c.Dir, "err", err)
	} else {
		s.log.Info("checkpoint.dir verified as shared storage", "job", job, "dir", c.Dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), etcdTimeout)
	defer cancel()
	_, err = s.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(coord.JobKey(job)), "=", fence)).
		Then(clientv3.OpPut(coord.StorageKey(job, s.node), coord.MustJSON(res))).Commit()
	if err != nil {
		s.log.Warn("cannot record the storage check", "job", job, "err", err)
	}
}

// writeWorkerRecord writes rec under guard (the job's fence) unless the
// record there is of a newer placement generation: a runner stopping on a
// node the worker moved away from must not overwrite what the runner on
// its new node wrote. A compare-and-swap on the record's revision keeps
// the check and the write together.
func writeWorkerRecord(ctx context.Context, cli *clientv3.Client, job string, guard clientv3.Cmp, rec schema.WorkerRecord) error {
	key := coord.WorkerKey(job, rec.Name)
	for {
		var cur schema.WorkerRecord
		rev, err := coord.GetJSON(ctx, cli, key, &cur)
		switch {
		case errors.Is(err, coord.ErrNotFound):
			rev = 0
		case err != nil:
			return err
		case cur.Gen > rec.Gen:
			return nil // superseded: the worker runs elsewhere now
		}
		resp, err := cli.Txn(ctx).If(guard, clientv3.Compare(clientv3.ModRevision(key), "=", rev)).
			Then(clientv3.OpPut(key, coord.MustJSON(rec))).
			Else(clientv3.OpTxn([]clientv3.Cmp{guard}, nil, nil)).Commit()
		if err != nil {
			return err
		}
		if resp.Succeeded || !resp.Responses[0].GetResponseTxn().GetSucceeded() {
			return nil // written, or the job is gone: nothing to record
		}
	}
}
