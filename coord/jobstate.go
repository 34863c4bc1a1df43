package coord

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord/schema"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrFenced is returned when a guarded write was refused because its writer
// no longer holds the authority (e.g. a deposed master).
var ErrFenced = errors.New("write fenced: authority lost")

// SetJobState moves a job to state unless it already ended: a terminal state
// (SUCCEEDED, FAILED, STOPPED) is final, whoever writes later. It reports
// whether the state changed. Guards fence the write (a master passes its
// leadership comparison); concurrency.STM cannot carry extra comparisons,
// hence the explicit compare-and-swap loop.
func SetJobState(ctx context.Context, cli *clientv3.Client, job string, state api.JobState, reason string, guards ...clientv3.Cmp) (bool, error) {
	key := StateKey(job)
	for {
		var cur schema.StateRecord
		rev, err := GetJSON(ctx, cli, key, &cur)
		if err != nil {
			return false, fmt.Errorf("set state of job %s: %w", job, err)
		}
		if api.Terminal(cur.State) || cur.State == state {
			return false, nil
		}
		cmps := append([]clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(key), "=", rev)}, guards...)
		next := MustJSON(schema.StateRecord{State: state, Reason: reason, Updated: time.Now().UTC()})
		resp, err := cli.Txn(ctx).If(cmps...).Then(clientv3.OpPut(key, next)).Commit()
		if err != nil {
			return false, fmt.Errorf("set state of job %s: %w", job, err)
		}
		if resp.Succeeded {
			return true, nil
		}
		if len(guards) > 0 {
			ok, err := guardsHold(ctx, cli, guards)
			if err != nil {
				return false, err
			}
			if !ok {
				return false, fmt.Errorf("set state of job %s: %w", job, ErrFenced)
			}
		}
	}
}

func guardsHold(ctx context.Context, cli *clientv3.Client, guards []clientv3.Cmp) (bool, error) {
	resp, err := cli.Txn(ctx).If(guards...).Commit()
	if err != nil {
		return false, fmt.Errorf("check fence: %w", err)
	}
	return resp.Succeeded, nil
}

// JobState reads a job's state record.
func JobState(ctx context.Context, kv clientv3.KV, job string) (schema.StateRecord, error) {
	var st schema.StateRecord
	_, err := GetJSON(ctx, kv, StateKey(job), &st)
	return st, err
}

// AppendEvent records something an operator should see in `gctl job status`.
// Keys sort by time, so a range read lists events in order. A job keeps
// the newest MaxJobEvents (see TrimEvents).
func AppendEvent(ctx context.Context, kv clientv3.KV, job, what string) error {
	if _, err := kv.Do(ctx, EventOp(job, what)); err != nil {
		return err
	}
	return TrimEvents(ctx, kv, job)
}

// EventOp is the put of event what, now, for a transaction that must record
// it with the change it tells of.
func EventOp(job, what string) clientv3.Op {
	now := time.Now().UTC()
	return clientv3.OpPut(EventKey(job, now, shortID()), MustJSON(api.Event{Time: now, What: what}))
}

func shortID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// WatchJobEnd closes the returned channel when the job reaches a terminal state
// or its record is deleted, and only then: when ctx ends first the channel
// stays open, so that a caller whose authority ended (a master that lost its
// leadership) cannot mistake that for the job's end and exit as if done.
func WatchJobEnd(ctx context.Context, cli *clientv3.Client, job string) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		ended := waitForKey(ctx, cli, StateKey(job), func(kv *mvccpb.KeyValue) bool {
			if kv == nil {
				return true
			}
			st, err := schema.Decode[schema.StateRecord](kv.Value)
			return err == nil && api.Terminal(st.State)
		})
		if ended {
			close(done)
		}
	}()
	return done
}
