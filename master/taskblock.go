package master

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/gtrain/gtrain/master/core"
)

// tasksPerBlock is how many consecutive task IDs share one etcd value. A
// block of 256 tasks encodes to about 2 KiB, so a change of one task
// rewrites little, and a million tasks are about 4000 keys.
const tasksPerBlock = 256

// blockFormat is the first byte of every encoded block.
const blockFormat = 1

var errBadTaskBlock = errors.New("malformed task block")

func blockOf(id int) int { return id / tasksPerBlock }

// encodeBlock packs statuses (ascending IDs, all of one block) as varints:
// the ID's distance from the previous one, state, failures, trainer, order
// and, for a pending task, its deadline in unix nanoseconds.
func encodeBlock(statuses []core.TaskStatus) []byte {
	buf := make([]byte, 0, 1+len(statuses)*8)
	buf = append(buf, blockFormat)
	prev := -1
	for _, s := range statuses {
		buf = binary.AppendUvarint(buf, uint64(s.ID-prev))
		buf = binary.AppendUvarint(buf, uint64(s.State))
		buf = binary.AppendUvarint(buf, uint64(s.Failures))
		buf = binary.AppendVarint(buf, int64(s.Trainer))
		buf = binary.AppendVarint(buf, int64(s.Order))
		if s.State == core.Pending {
			buf = binary.AppendVarint(buf, s.Deadline.UnixNano())
		}
		prev = s.ID
	}
	return buf
}

// decodeBlock is encodeBlock's inverse; it appends to out.
func decodeBlock(out []core.TaskStatus, data []byte) ([]core.TaskStatus, error) {
	if len(data) == 0 || data[0] != blockFormat {
		return out, fmt.Errorf("%w: unknown format", errBadTaskBlock)
	}
	r := blockReader{data: data[1:]}
	prev := -1
	for len(r.data) > 0 && r.err == nil {
		s := core.TaskStatus{ID: prev + int(r.uvarint())}
		s.State = core.TaskState(r.uvarint())
		s.Failures = int(r.uvarint())
		s.Trainer = int(r.varint())
		s.Order = int(r.varint())
		if s.State == core.Pending {
			s.Deadline = unixNanoTime(r.varint())
		}
		if r.err == nil && (s.ID <= prev || !s.State.Valid()) {
			r.err = fmt.Errorf("%w: task %d after %d, state %d", errBadTaskBlock, s.ID, prev, int(s.State))
		}
		out = append(out, s)
		prev = s.ID
	}
	return out, r.err
}

type blockReader struct {
	data []byte
	err  error
}

func (r *blockReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.data)
	if !r.consume(n) {
		return 0
	}
	return v
}

func (r *blockReader) varint() int64 {
	v, n := binary.Varint(r.data)
	if !r.consume(n) {
		return 0
	}
	return v
}

// consume drops n bytes read, or records a truncated block (n <= 0).
func (r *blockReader) consume(n int) bool {
	if r.err != nil {
		return false
	}
	if n <= 0 {
		r.err = fmt.Errorf("%w: truncated", errBadTaskBlock)
		r.data = nil
		return false
	}
	r.data = r.data[n:]
	return true
}

// mergeBlock returns the block that old (encoded, nil for none) becomes with
// changed (ascending IDs, all of the block) applied.
func mergeBlock(old []byte, changed []core.TaskStatus) ([]byte, error) {
	var cur []core.TaskStatus
	if old != nil {
		var err error
		if cur, err = decodeBlock(nil, old); err != nil {
			return nil, err
		}
	}
	merged := make([]core.TaskStatus, 0, len(cur)+len(changed))
	i, j := 0, 0
	for i < len(cur) || j < len(changed) {
		switch {
		case j == len(changed) || (i < len(cur) && cur[i].ID < changed[j].ID):
			merged = append(merged, cur[i])
			i++
		case i == len(cur) || changed[j].ID < cur[i].ID:
			merged = append(merged, changed[j])
			j++
		default: // the same task: the change wins
			merged = append(merged, changed[j])
			i, j = i+1, j+1
		}
	}
	return encodeBlock(merged), nil
}

// splitByBlock groups statuses (sorted by ID here) by block, ascending.
func splitByBlock(statuses []core.TaskStatus) [][]core.TaskStatus {
	sorted := slices.IsSortedFunc(statuses, func(a, b core.TaskStatus) int { return a.ID - b.ID })
	if !sorted {
		statuses = slices.Clone(statuses)
		slices.SortFunc(statuses, func(a, b core.TaskStatus) int { return a.ID - b.ID })
	}
	var out [][]core.TaskStatus
	for start := 0; start < len(statuses); {
		end := start + 1
		for end < len(statuses) && blockOf(statuses[end].ID) == blockOf(statuses[start].ID) {
			end++
		}
		out = append(out, statuses[start:end])
		start = end
	}
	return out
}
