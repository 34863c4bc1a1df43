package pserver

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/client"
)

// Sentinel errors of the step logic.
var (
	ErrStaleStep     = errors.New("push for a step already applied")
	ErrFutureStep    = errors.New("push for a step not yet reached")
	ErrBadMicroBatch = errors.New("micro-batch index out of range")
	ErrBadBlock      = errors.New("block not held by this pserver")
	ErrBadGradient   = errors.New("gradient data out of the block's bounds")
	ErrRolledBack    = errors.New("the job rolled back past this request's rollback epoch")
	// ErrNonFinite is a push holding a NaN or an infinity: applied, it would
	// make the model NaN (issue 19). The trainer reports such a step as a
	// divergence (client.IsNonFinite).
	ErrNonFinite = errors.New(client.NonFiniteGradient)
	// ErrBadRecords is a push over a negative record count.
	ErrBadRecords = errors.New("push over a negative number of records")
	// ErrSnapshotUnsaved: applying the push would change values the
	// snapshot being written still needs. The push stays the caller's: it
	// preserves them (Preserve) and pushes again (shardDriver.push).
	ErrSnapshotUnsaved = errors.New("the push would change values a snapshot has not saved")
)

// ShardConfig configures a Shard.
type ShardConfig struct {
	Mode         jobspec.Mode   // sync: a step once every trainer pushed; async: every push at once
	MicroBatches int            // sync: pushes per step, one per micro-batch
	Blocks       []client.Block // the blocks this pserver holds
	Optimizer    OptimizerConfig
	// SnapshotCopyMax bounds the floats a checkpoint may copy (see
	// Snapshot): a change of the values waits while more than that is left
	// to write. 0: half the shard's parameters (not of the optimizer's
	// slots: for Adam, state + one gradient + that copy is 1.5x the state).
	SnapshotCopyMax int
	// Frozen holds the indexes of the parameters never updated
	// (init_from.freeze): their gradients are received and dropped.
	Frozen map[int]bool
	// InitSlots fills slot k of block b's optimizer state at step 0 (a warm
	// start with init_from.optimizer_state); nil: zeros.
	InitSlots func(b client.Block, k int, dst []float32)
	// StepBase is the optimizer steps the shard's step 0 continues: adam's
	// bias correction counts them when its moments were loaded.
	StepBase int64
	// Tables are the embedding tables whose rows this shard may hold
	// (sparse issue; see tables.go).
	Tables []TableConfig
}

// Validate names the bad field.
func (c ShardConfig) Validate() error {
	if c.Mode != jobspec.ModeSync && c.Mode != jobspec.ModeAsync {
		return fmt.Errorf("shard: Mode %q: want %s or %s", c.Mode, jobspec.ModeSync, jobspec.ModeAsync)
	}
	if c.SnapshotCopyMax < 0 {
		return fmt.Errorf("shard: SnapshotCopyMax must be >= 0, got %d", c.SnapshotCopyMax)
	}
	if c.Mode == jobspec.ModeSync && c.MicroBatches < 1 {
		return fmt.Errorf("shard: MicroBatches must be >= 1 in sync mode, got %d", c.MicroBatches)
	}
	return c.Optimizer.Validate()
}

type blockState struct {
	client.Block
	param []float32
	slots [][]float32
}

// Gradient is one push for one step: per block, the SUM of the gradients
// over Records records. In sync mode it is the micro-batch MicroBatch of the
// step (the wire's trainer_id field carries it); async mode ignores it.
type Gradient struct {
	MicroBatch int
	Step       int64
	Records    int64
	// Checkpoint asks for a snapshot right after this step is applied; every
	// trainer carries the master's flag, so every pserver snapshots the same step.
	Checkpoint    bool
	RollbackEpoch int64 // the master's rollback epoch the trainer worked in
	// rows are the row gradients of the micro-batches summed into this
	// one, per table, in micro-batch order (see tables.go).
	rows map[string][]RowGrads
	data map[int][]float32
	got  map[int]int // floats received per block: a push must cover every block
}

// Shard is the pure step logic of one pserver: no sockets, no clock, no
// waiting (its driver, shardDriver, waits for the checkpoint writer and
// times the pause). Safe for concurrent use.
type Shard struct {
	cfg    ShardConfig
	opt    Optimizer
	mu     sync.RWMutex
	blocks map[int]*blockState
	order  []int // block IDs ascending, the fixed order of every loop
	step   int64 // steps applied

	gather   gathering     // sync: this step's micro-batches
	advanced chan struct{} // closed and replaced whenever step or restores changes
	// restores counts Restore, Rebase and Reinit, this process's own
	// replacements of the shard's values: a pull waiting across one aborts.
	restores int64
	// rollbackEpoch (sync) is the newest of the master's rollback epochs this
	// shard was restored in; pulls and pushes of older ones are refused.
	rollbackEpoch int64
	free          gradientPool

	tables tableSet // embedding tables and the rows pushed for this step (tables.go)

	snapshots chan *Snapshot // taken under the lock, written out by the checkpointer
	writing   *Snapshot      // the snapshot being written, if any (see preserveLocked)
	copyMax   int            // ShardConfig.SnapshotCopyMax, or its default
	spare     []float32      // the buffer snapshots copy into (snapshotcopy.go)
	spareFree []float32      // its part no snapshot holds
}

// NewShard builds a shard; init fills each block's initial parameters.
func NewShard(cfg ShardConfig, init func(b client.Block, dst []float32)) (*Shard, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	opt, err := NewOptimizer(cfg.Optimizer)
	if err != nil {
		return nil, err
	}
	s := &Shard{cfg: cfg, opt: opt, blocks: map[int]*blockState{}, gather: newGathering(), free: newGradientPool(), advanced: make(chan struct{}),
		snapshots: make(chan *Snapshot, 1)}
	if s.tables, err = newTableSet(cfg.Tables); err != nil {
		return nil, err
	}
	for _, b := range cfg.Blocks {
		bs := &blockState{Block: b, param: make([]float32, b.Len)}
		for i := 0; i < opt.Slots(); i++ {
			bs.slots = append(bs.slots, make([]float32, b.Len))
		}
		if init != nil {
			init(b, bs.param)
		}
		s.initSlots(bs)
		s.blocks[b.ID] = bs
		s.order = append(s.order, b.ID)
		s.copyMax += b.Len / 2
	}
	if cfg.SnapshotCopyMax > 0 {
		s.copyMax = cfg.SnapshotCopyMax
	}
	return s, nil
}

// initSlots gives b's optimizer slots their step-0 values.
func (s *Shard) initSlots(b *blockState) {
	for k, slot := range b.slots {
		clear(slot)
		if s.cfg.InitSlots != nil {
			s.cfg.InitSlots(b.Block, k, slot)
		}
	}
}

// Step is the number of steps applied.
func (s *Shard) Step() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.step
}

// Advanced returns a channel closed at the next step or restore, the current
// step and the restore count.
func (s *Shard) Advanced() (advanced <-chan struct{}, step, restores int64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.advanced, s.step, s.restores
}

// RollbackEpoch is the master's rollback epoch this shard was last restored in.
func (s *Shard) RollbackEpoch() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rollbackEpoch
}

// NewGradient returns an empty gradient buffer sized for this shard.
func (s *Shard) NewGradient(microBatch int, step, records int64) *Gradient {
	g := s.free.Get()
	if g == nil {
		g = &Gradient{data: map[int][]float32{}, got: map[int]int{}}
		for _, id := range s.order {
			g.data[id] = make([]float32, s.blocks[id].Len)
		}
	}
	g.MicroBatch, g.Step, g.Records, g.Checkpoint, g.RollbackEpoch = microBatch, step, records, false, 0
	clear(g.rows)
	// No clearing: a push writes every float of every block (Push checks),
	// and zeroing a whole shard per push would cost as much as a copy.
	clear(g.got)
	return g
}

// Write copies gradient values into block at offset.
func (g *Gradient) Write(block int, offset int64, vals []float32) error {
	d, ok := g.data[block]
	if !ok {
		return fmt.Errorf("block %d: %w", block, ErrBadBlock)
	}
	if offset < 0 || offset+int64(len(vals)) > int64(len(d)) {
		return fmt.Errorf("block %d offset %d len %d (block len %d): %w", block, offset, len(vals), len(d), ErrBadGradient)
	}
	copy(d[offset:], vals)
	g.got[block] += len(vals)
	return nil
}

// complete reports a block not fully received (a truncated or malformed
// push), a value that is not finite, or a negative record count: what no
// trainer sends unless broken, hostile, or its job diverged. (A push of no
// records is a sync step's empty micro-batch, which the step needs.)
func (g *Gradient) complete() error {
	if g.Records < 0 {
		return fmt.Errorf("%d records: %w", g.Records, ErrBadRecords)
	}
	for id, d := range g.data {
		if g.got[id] != len(d) {
			return fmt.Errorf("block %d: %d of %d floats received: %w", id, g.got[id], len(d), ErrBadGradient)
		}
		if i := nonFinite(d); i >= 0 {
			return fmt.Errorf("%w: block %d value %d is %v", ErrNonFinite, id, i, d[i])
		}
	}
	return nil
}

// nonFinite is the index of v's first NaN or infinity, -1 when none: an
// all-ones exponent, tested on the bits (a float compare is slower).
func nonFinite(v []float32) int {
	const exp = 0x7f800000
	for i := finiteVec(v); i < len(v); i++ {
		if math.Float32bits(v[i])&exp == exp {
			return i
		}
	}
	return -1
}

// Push hands a complete gradient to the shard. In async mode it is applied at
// once. In sync mode it is one micro-batch of its step (see microbatch.go):
// the step is applied once every micro-batch arrived, summed in micro-batch
// order; the first push of a micro-batch wins, a repeat (a recomputation, a
// restarted trainer) is dropped. It returns whether a step was applied and
// the step count. A push that would change values the snapshot being
// written has not saved is refused with ErrSnapshotUnsaved, g untouched.
func (s *Shard) Push(g *Gradient) (applied bool, step int64, err error) {
	if err := g.complete(); err != nil {
		return false, s.Step(), err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.Mode == jobspec.ModeAsync {
		if g.Records > 0 && s.unsavedLocked() {
			return false, s.step, ErrSnapshotUnsaved
		}
		s.applyLocked([]*Gradient{g})
		s.free.Put(g)
		return true, s.step, nil
	}
	if err := s.checkStepLocked("push", g.MicroBatch, g.Step, g.RollbackEpoch); err != nil {
		return false, s.step, err
	}
	if s.unsavedLocked() && s.gather.changesValues(g, s.cfg.MicroBatches) {
		return false, s.step, ErrSnapshotUnsaved
	}
	s.tables.attach(g)
	return s.gatherLocked(g), s.step, nil
}

// checkStepLocked refuses a sync push (what: "push", or "rows" of a table)
// of a micro-batch the step does not have, of an older rollback epoch, or
// of another step than the one the shard gathers.
func (s *Shard) checkStepLocked(what string, microBatch int, step, rollbackEpoch int64) error {
	switch {
	case microBatch < 0 || microBatch >= s.cfg.MicroBatches:
		return fmt.Errorf("micro-batch %d of %d: %w", microBatch, s.cfg.MicroBatches, ErrBadMicroBatch)
	case rollbackEpoch < s.rollbackEpoch:
		return fmt.Errorf("%s of step %d in rollback epoch %d, job at rollback epoch %d: %w", what, step, rollbackEpoch, s.rollbackEpoch, ErrRolledBack)
	case step < s.step:
		return fmt.Errorf("%s of step %d, shard at %d: %w", what, step, s.step, ErrStaleStep)
	case step > s.step:
		return fmt.Errorf("%s of step %d, shard at %d: %w", what, step, s.step, ErrFutureStep)
	}
	return nil
}

// AbortStep drops the pushes received for the current step (sync mode), so
// the step is redone without partial gradients.
func (s *Shard) AbortStep() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gather.reset(s.free)
	s.tables.dropPending()
}

// applyLocked sums the gradients in the given (micro-batch) order, divides by the
// total record count and applies the optimizer: the record-weighted mean.
func (s *Shard) applyLocked(grads []*Gradient) {
	var records int64
	for _, g := range grads {
		records += g.Records
	}
	t := s.cfg.StepBase + s.step + 1
	if records > 0 {
		s.preserveLocked()
		inv := float32(1) / float32(records)
		for _, id := range s.order {
			b := s.blocks[id]
			if s.cfg.Frozen[b.Param] {
				continue
			}
			sum := grads[0].data[id]
			for _, g := range grads[1:] {
				addInto(sum, g.data[id])
			}
			scale(sum, inv)
			s.opt.Update(b.param, sum, b.slots, t)
		}
		s.tables.apply(grads, records)
	}
	s.step++
	s.wakeLocked()
}

func (s *Shard) wakeLocked() {
	close(s.advanced)
	s.advanced = make(chan struct{})
}

// addInto is model.AddInto: one vector add for the model's bias sums and
// the pserver's micro-batch sums.
func addInto(dst, src []float32) { model.AddInto(dst, src) }

func scale(v []float32, k float32) {
	for i := scaleVec(v, k); i < len(v); i++ {
		v[i] *= k
	}
}

// View calls fn with each block's parameters, in block order, under a read
// lock held for the whole walk: fn sees one consistent step. fn must not
// retain the slices.
func (s *Shard) View(fn func(step int64, b client.Block, param []float32) error) error {
	return s.ViewState(func(step int64, b client.Block, param []float32, _ [][]float32) error {
		return fn(step, b, param)
	})
}

// ViewState is View that also shows each block's optimizer slots (as many
// as the optimizer keeps: none for sgd).
func (s *Shard) ViewState(fn func(step int64, b client.Block, param []float32, slots [][]float32) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, id := range s.order {
		b := s.blocks[id]
		if err := fn(s.step, b.Block, b.param, b.slots); err != nil {
			return err
		}
	}
	return nil
}

// StateFloats is the size of the shard: its parameters and optimizer slots.
func (s *Shard) StateFloats() int {
	n := 0
	for _, b := range s.blocks {
		n += len(b.param) * (1 + len(b.slots))
	}
	return n
}

// Blocks lists the blocks held, in order.
func (s *Shard) Blocks() []client.Block {
	out := make([]client.Block, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.blocks[id].Block)
	}
	return out
}
