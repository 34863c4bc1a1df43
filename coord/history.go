package coord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gtrain/gtrain/api"
)

// ErrBadHistory is a history block that does not decode.
var ErrBadHistory = errors.New("bad history block")

// HistoryBlockPasses is how many passes one history key holds. A job of
// 10,000 passes is then 157 keys of at most ~12 KiB (about 1.2 MiB), and a
// pass end rewrites one small block, not the whole history; a key per pass
// would be 10,000 keys for a status read to range over.
const HistoryBlockPasses = 64

// HistoryPrefix holds a job's per-pass history, outside JobPrefix so that
// the readers of every job (job list, the supervisor's and the scheduler's
// watches) never scan it; only one job's status reads it.
func HistoryPrefix(job string) string { return Root + "history/" + job + "/" }

// HistoryBlockKey zero-pads the block index so that a range read returns
// blocks, hence passes, in order.
func HistoryBlockKey(job string, block int) string {
	return fmt.Sprintf("%sb%06d", HistoryPrefix(job), block)
}

// ParseHistoryBlockKey returns the block index of a key of HistoryBlockKey.
func ParseHistoryBlockKey(job, key string) (block int, ok bool) {
	return indexAfter(HistoryPrefix(job)+"b", key)
}

// indexAfter parses the non-negative index that follows prefix in key.
func indexAfter(prefix, key string) (int, bool) {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(rest)
	if err != nil || i < 0 {
		return 0, false
	}
	return i, true
}

// HistoryBlockOf is the block that holds pass.
func HistoryBlockOf(pass int) int { return pass / HistoryBlockPasses }

// MergeHistory returns the block encoded in stored (empty: none) with e
// added: entries of e's pass and later are dropped first, since a pass
// finishing again means a rollback voided them.
func MergeHistory(stored []byte, e api.PassHistory) ([]byte, error) {
	var entries []api.PassHistory
	if len(stored) > 0 {
		if err := json.Unmarshal(stored, &entries); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadHistory, err)
		}
	}
	entries = slices.DeleteFunc(entries, func(h api.PassHistory) bool { return h.Pass >= e.Pass })
	entries = append(entries, e)
	return json.Marshal(entries)
}

// HistoryPut reads the block of e's pass and returns the write that adds e
// to it, for the master's fenced commit (the master is the only writer).
func HistoryPut(ctx context.Context, kv clientv3.KV, job string, e api.PassHistory) (clientv3.Op, error) {
	key := HistoryBlockKey(job, HistoryBlockOf(e.Pass))
	resp, err := kv.Get(ctx, key)
	if err != nil {
		return clientv3.Op{}, fmt.Errorf("read history of %s: %w", job, err)
	}
	var stored []byte
	if len(resp.Kvs) > 0 {
		stored = resp.Kvs[0].Value
	}
	data, err := MergeHistory(stored, e)
	if err != nil {
		return clientv3.Op{}, fmt.Errorf("history of %s: %s: %w", job, key, err)
	}
	return clientv3.OpPut(key, string(data)), nil
}

// DecodeHistory decodes the blocks read under HistoryPrefix(job) into one
// entry per pass before `before` (the passes finished now: later entries
// are leftovers of a history a rollback voided), in pass order.
func DecodeHistory(job string, blocks [][]byte, before int) ([]api.PassHistory, error) {
	byPass := map[int]api.PassHistory{}
	for i, b := range blocks {
		var entries []api.PassHistory
		if err := json.Unmarshal(b, &entries); err != nil {
			return nil, fmt.Errorf("history of %s: block %d: %w: %v", job, i, ErrBadHistory, err)
		}
		for _, e := range entries {
			if e.Pass >= 0 && e.Pass < before {
				byPass[e.Pass] = e
			}
		}
	}
	out := make([]api.PassHistory, 0, len(byPass))
	for _, e := range byPass {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b api.PassHistory) int { return a.Pass - b.Pass })
	return out, nil
}

// ReadHistory reads job's history of the passes before `before`.
func ReadHistory(ctx context.Context, kv clientv3.KV, job string, before int) ([]api.PassHistory, error) {
	resp, err := kv.Get(ctx, HistoryPrefix(job), clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("read history of %s: %w", job, err)
	}
	blocks := make([][]byte, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		if _, ok := ParseHistoryBlockKey(job, string(kv.Key)); ok {
			blocks = append(blocks, kv.Value)
		}
	}
	return DecodeHistory(job, blocks, before)
}

// DeleteHistoryOp deletes job's history (with the job's purge).
func DeleteHistoryOp(job string) clientv3.Op {
	return clientv3.OpDelete(HistoryPrefix(job), clientv3.WithPrefix())
}
