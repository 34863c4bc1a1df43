package checkpoint

import (
	"context"
	"encoding/json"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// EtcdRecorder keeps each record as JSON at the key its caller names for the
// index. The version of a
// record is its etcd ModRevision.
type EtcdRecorder struct {
	cli   *clientv3.Client
	keyOf func(index int) string
	// Guard is ANDed into every CompareAndSwap, e.g. a comparison on the key
	// that proves this pserver still holds its lease, so a fenced-out process
	// cannot move the record even if it saw the latest version.
	Guard []clientv3.Cmp
}

// NewEtcdRecorder returns a recorder that stores the record of each index
// at keyOf(index); the key layout is coord's, so callers pass coord's.
func NewEtcdRecorder(cli *clientv3.Client, keyOf func(index int) string) *EtcdRecorder {
	return &EtcdRecorder{cli: cli, keyOf: keyOf}
}

// Key returns the etcd key that holds the record of index.
func (e *EtcdRecorder) Key(index int) string { return e.keyOf(index) }

// Load implements Recorder.
func (e *EtcdRecorder) Load(ctx context.Context, index int) (Record, int64, bool, error) {
	key := e.Key(index)
	resp, err := e.cli.Get(ctx, key)
	if err != nil {
		return Record{}, 0, false, fmt.Errorf("checkpoint: reading record %s from etcd: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return Record{}, 0, false, nil
	}
	kv := resp.Kvs[0]
	var rec Record
	if err := json.Unmarshal(kv.Value, &rec); err != nil {
		return Record{}, 0, false, fmt.Errorf("%w: record %s in etcd is not valid JSON: %v", ErrCorrupt, key, err)
	}
	return rec, kv.ModRevision, true, nil
}

// CompareAndSwap implements Recorder.
func (e *EtcdRecorder) CompareAndSwap(ctx context.Context, rec Record, prevVersion int64) (int64, error) {
	key := e.Key(rec.Index)
	value, err := json.Marshal(rec)
	if err != nil {
		return 0, fmt.Errorf("checkpoint: encoding record %s: %w", key, err)
	}
	var same clientv3.Cmp
	if prevVersion == 0 {
		same = clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
	} else {
		same = clientv3.Compare(clientv3.ModRevision(key), "=", prevVersion)
	}
	cmps := append([]clientv3.Cmp{same}, e.Guard...)
	resp, err := e.cli.Txn(ctx).
		If(cmps...).
		Then(clientv3.OpPut(key, string(value))).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return 0, fmt.Errorf("checkpoint: writing record %s to etcd: %w", key, err)
	}
	if !resp.Succeeded {
		return 0, conflictError(key, prevVersion, resp)
	}
	// The put is the only write of the txn, so the key's new ModRevision is the txn's revision.
	return resp.Header.Revision, nil
}

func conflictError(key string, prevVersion int64, resp *clientv3.TxnResponse) error {
	var cur int64
	if len(resp.Responses) > 0 {
		if kvs := resp.Responses[0].GetResponseRange().GetKvs(); len(kvs) > 0 {
			cur = kvs[0].ModRevision
		}
	}
	if cur == prevVersion {
		return fmt.Errorf("%w: record %s is still at version %d but a fencing guard failed", ErrConflict, key, cur)
	}
	return fmt.Errorf("%w: record %s is at version %d, writer expected %d", ErrConflict, key, cur, prevVersion)
}
