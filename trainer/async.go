package trainer

import (
	"context"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/program"
	"github.com/gtrain/gtrain/pserver/client"
)

// runAsync trains the master's tasks, each in minibatches of batch_size,
// pulling and pushing at its own pace.
func (t *trainer) runAsync(ctx context.Context) error {
	finished, failed := int32(-1), int32(-1)
	var pass *int32 // of the task reported
	var lossSum float64
	var records int64
	for {
		if !t.leaseAlive(ctx) {
			// Stalled past the lease: the master gave the task to another;
			// neither report it nor take another under an ID no longer ours.
			return errLeaseLost
		}
		var w *api.GetTaskResponse
		err := t.master.call(ctx, "get a task", func(m api.MasterClient) error {
			var err error
			w, err = m.GetTask(ctx, &api.GetTaskRequest{TrainerId: int32(t.id), FinishedTask: finished, FailedTask: failed, LossSum: lossSum, Records: records, TaskPass: pass})
			return err
		})
		if err != nil {
			return err
		}
		finished, failed, lossSum, records = -1, -1, 0, 0
		switch w.Status {
		case api.WorkStatus_WORK_DONE:
			t.log.Info("training done")
			return nil
		case api.WorkStatus_WORK_WAIT:
			continue
		}
		task, taskPass := w.Task, w.Pass
		pass = &taskPass
		ex, err := t.taskExamples(task.File, int(task.FirstChunk), int(task.Chunks), int(taskPass), int(task.Id))
		if err != nil {
			return err
		}
		for lo := 0; lo < len(ex); lo += t.spec.BatchSize {
			batch := ex[lo:min(lo+t.spec.BatchSize, len(ex))]
			if err := t.retryTransient(ctx, "pull parameters", func() error {
				_, _, err := t.ps.Pull(ctx, 0, 0, t.params)
				return t.psErr(ctx, err)
			}); err != nil {
				return err
			}
			// Async has no global step: the seed comes from the task's
			// pass, id and minibatch, the same for a re-queued task.
			t.progStep = program.Step{Seed: program.RequestSeed(t.spec.Seed^uint64(taskPass)<<32, int64(task.Id), lo/t.spec.BatchSize)}
			var loss float64
			if t.rec != nil {
				loss, err = t.recCompute(ctx, batch, nil, 0, 0, t.id, true)
			} else {
				loss, err = t.compute(batch, nil)
			}
			if err != nil {
				return err
			}
			err = t.retryTransient(ctx, "push gradients", func() error {
				return t.psErr(ctx, t.ps.Push(ctx, t.id, 0, 0, int64(len(batch)), false, t.grads))
			})
			if client.IsNonFinite(err) {
				loss, err = nonFiniteLoss(t.log, err), nil
			}
			if err != nil {
				return err
			}
			lossSum += loss
			records += int64(len(batch))
		}
		finished = task.Id
	}
}
