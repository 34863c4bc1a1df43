package master

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/master/core"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Limits of one commit: etcd refuses a transaction of more than 128 ops
// (--max-txn-ops) or a request over 1.5 MiB (--max-request-bytes) by
// default; these stay under both, with room for the fence and Meta.
const (
	maxOpsPerTxn   = 120
	maxBytesPerTxn = 1 << 20
)

// loadPage is how many blocks one range read of Load returns.
const loadPage = 512

// Committer applies ops atomically under the leader's fence (coord.Leadership).
type Committer interface {
	Commit(ctx context.Context, ops ...clientv3.Op) error
}

// EtcdStore keeps the master's state in etcd: the task states in blocks of
// tasksPerBlock tasks under coord.TaskBlockPrefix and the Meta beside the
// job, never the whole queue in one value. Every write goes through the
// leader's fence. It keeps a copy of the blocks of the slot in use, so that a
// change of a few tasks rewrites only their blocks without reading them:
// Save must follow a Load, or start with a full rewrite (NewDriver does).
type EtcdStore struct {
	cli  *clientv3.Client
	lead Committer
	job  string

	maxOps, maxBytes int // commit limits; tests lower them

	mu     sync.Mutex
	slot   int            // the slot blocks describe; -1: none yet
	blocks map[int][]byte // encoded blocks of slot, as stored
	// history is the Meta.LastPass known to be in the job's history.
	history *api.PassHistory
}

// NewEtcdStore returns the store of job.
func NewEtcdStore(cli *clientv3.Client, lead Committer, job string) *EtcdStore {
	return &EtcdStore{cli: cli, lead: lead, job: job, maxOps: maxOpsPerTxn, maxBytes: maxBytesPerTxn,
		slot: -1, blocks: map[int][]byte{}}
}

// Load reads Meta and every task status, by ascending ID.
func (s *EtcdStore) Load(ctx context.Context) (*core.Meta, []core.TaskStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	resp, err := s.cli.Get(ctx, coord.MasterMetaKey(s.job))
	if err != nil {
		return nil, nil, fmt.Errorf("load master state of %s: %w", s.job, err)
	}
	if len(resp.Kvs) == 0 {
		s.slot, s.blocks = -1, map[int][]byte{}
		return nil, nil, nil
	}
	var meta core.Meta
	if err := json.Unmarshal(resp.Kvs[0].Value, &meta); err != nil {
		return nil, nil, fmt.Errorf("decode %s: %w", resp.Kvs[0].Key, err)
	}
	// The blocks are read at the revision of this read, not at Meta's own:
	// that one may be older than etcd's compaction (a job idle for longer
	// than the retention) and no longer readable.
	rev := resp.Header.Revision
	blocks, err := s.readBlocks(ctx, meta.Slot, rev)
	if err != nil {
		return nil, nil, err
	}
	out := make([]core.TaskStatus, 0, meta.Tasks)
	for _, b := range blocks {
		if out, err = decodeBlock(out, b.data); err != nil {
			return nil, nil, fmt.Errorf("load tasks of %s: block %d: %w", s.job, b.index, err)
		}
	}
	s.history = meta.LastPass // committed with this Meta
	s.slot, s.blocks = meta.Slot, make(map[int][]byte, len(blocks))
	for _, b := range blocks {
		s.blocks[b.index] = b.data
	}
	return &meta, out, nil
}

type storedBlock struct {
	index int
	data  []byte
}

// readBlocks reads the blocks of slot in pages, all at revision rev (that of
// Meta), so that they and Meta are one consistent state.
func (s *EtcdStore) readBlocks(ctx context.Context, slot int, rev int64) ([]storedBlock, error) {
	prefix := coord.TaskBlockPrefix(s.job, slot)
	end := clientv3.GetPrefixRangeEnd(prefix)
	var out []storedBlock
	for from := prefix; ; {
		resp, err := s.cli.Get(ctx, from, clientv3.WithRange(end), clientv3.WithRev(rev), clientv3.WithLimit(loadPage))
		if err != nil {
			return nil, fmt.Errorf("load tasks of %s: %w", s.job, err)
		}
		for _, kv := range resp.Kvs {
			i, ok := coord.ParseTaskBlockKey(s.job, slot, string(kv.Key))
			if !ok {
				return nil, fmt.Errorf("load tasks of %s: key %s: %w", s.job, kv.Key, errBadTaskBlock)
			}
			out = append(out, storedBlock{index: i, data: kv.Value})
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return out, nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// Save writes the blocks of the changed tasks (into meta.Slot) then Meta and
// progress, fenced, in commits within maxOps and maxBytes, Meta in the last
// one. A full rewrite targets the slot not in use, so it is atomic through
// Meta; it starts the copy of that slot afresh.
func (s *EtcdStore) Save(ctx context.Context, meta core.Meta, changed []core.TaskStatus, progress *schema.ProgressRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if meta.Slot != s.slot {
		s.slot, s.blocks = meta.Slot, map[int][]byte{}
	}
	puts, err := s.blockPuts(meta.Slot, changed)
	if err != nil {
		return fmt.Errorf("save master state of %s: %w", s.job, err)
	}
	tail := []clientv3.Op{clientv3.OpPut(coord.MasterMetaKey(s.job), coord.MustJSON(meta))}
	if progress != nil {
		tail = append(tail, clientv3.OpPut(coord.ProgressKey(s.job), coord.MustJSON(progress)))
	}
	if h, err := s.historyPut(ctx, meta.LastPass); err != nil {
		return fmt.Errorf("save master state of %s: %w", s.job, err)
	} else if h != nil {
		tail = append(tail, *h)
	}
	batches := batchPuts(puts, len(tail), s.maxOps, s.maxBytes)
	for bi, batch := range batches {
		ops := make([]clientv3.Op, 0, len(batch)+len(tail))
		for _, p := range batch {
			ops = append(ops, clientv3.OpPut(p.key, string(p.data)))
		}
		if bi == len(batches)-1 {
			ops = append(ops, tail...)
		}
		if err := s.lead.Commit(ctx, ops...); err != nil {
			return fmt.Errorf("save master state of %s: %w", s.job, err)
		}
		for _, p := range batch {
			s.blocks[p.index] = p.data
		}
	}
	s.history = meta.LastPass
	return nil
}

// historyPut is the write that adds last (a newly finished pass) to the
// job's history, in the commit of the Meta that carries it; nil when it is
// there already.
func (s *EtcdStore) historyPut(ctx context.Context, last *api.PassHistory) (*clientv3.Op, error) {
	if last == nil || (s.history != nil && s.history.Pass == last.Pass && s.history.Ended.Equal(last.Ended)) {
		return nil, nil
	}
	op, err := coord.HistoryPut(ctx, s.cli, s.job, *last)
	if err != nil {
		return nil, err
	}
	return &op, nil
}

type blockPut struct {
	index int
	key   string
	data  []byte
}

// blockPuts encodes the blocks that changed touches, merged with the copy.
func (s *EtcdStore) blockPuts(slot int, changed []core.TaskStatus) ([]blockPut, error) {
	groups := splitByBlock(changed)
	puts := make([]blockPut, 0, len(groups))
	for _, g := range groups {
		i := blockOf(g[0].ID)
		data, err := mergeBlock(s.blocks[i], g)
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", i, err)
		}
		puts = append(puts, blockPut{index: i, key: coord.TaskBlockKey(s.job, slot, i), data: data})
	}
	return puts, nil
}

// batchPuts cuts puts into commits of at most maxOps ops and about maxBytes
// bytes; the last commit also has room for tail more ops (Meta, progress).
// It returns one empty batch when there are no puts.
func batchPuts(puts []blockPut, tail, maxOps, maxBytes int) [][]blockPut {
	batches := [][]blockPut{nil}
	bytes := 0
	for i := range puts {
		cur := batches[len(batches)-1]
		size := len(puts[i].key) + len(puts[i].data)
		if len(cur) > 0 && (len(cur)+1 > maxOps || bytes+size > maxBytes) {
			batches, cur, bytes = append(batches, nil), nil, 0
		}
		batches[len(batches)-1] = append(cur, puts[i])
		bytes += size
	}
	if last := batches[len(batches)-1]; len(last) > 0 && len(last)+tail > maxOps {
		batches = append(batches, nil) // Meta alone in a commit of its own
	}
	return batches
}
