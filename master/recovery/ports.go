package recovery

import (
	"context"

	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/master/core"
)

// What recovery and re-sharding need from the outside, each as narrow as
// their decisions use it: etcd.go implements them on etcd and the pservers'
// gRPC client; the unit tests on memory.

// Driver is the master's driver (master.Driver) as recovery sees it.
type Driver interface {
	// Snapshots delivers the state at each step flagged for a checkpoint.
	Snapshots() <-chan core.State
	Position() (pass int, step int64)
	Epoch() int64
	Done() bool
	// Changed is closed at the next change of the state.
	Changed() <-chan struct{}
	// CatchUp commits, from the plan, the steps the pservers applied up to step.
	CatchUp(ctx context.Context, step int64) error
	Pause()
	// PauseUnlessFinishing pauses unless the job is evaluating its last
	// pass or done (false then).
	PauseUnlessFinishing() bool
	// Rollback resumes at state (nil: the start) in epoch.
	Rollback(ctx context.Context, state *core.State, epoch int64) error
	CheckpointNext()
}

// CheckpointStore keeps the job's checkpoint records: the marks each
// participant (the master, every pserver) writes once its part of a step is
// on disk, and the global checkpoint record that says which steps are
// complete. Every write is fenced on the leadership.
type CheckpointStore interface {
	// Global reads the global checkpoint record (zero: none yet) and the
	// revision of its last change (0: none).
	Global(ctx context.Context) (g schema.GlobalCheckpoint, rev int64, err error)
	// GlobalChanged fires at the record's first change after rev (0: from
	// now) and is closed when ctx ends.
	GlobalChanged(ctx context.Context, rev int64) <-chan struct{}
	// Marks names who marked step: coord.MasterMark or a worker's name.
	Marks(ctx context.Context, step int64) ([]string, error)
	// WatchMarks calls marked with the step of every new mark until ctx
	// ends (nil) or the watch fails (an error).
	WatchMarks(ctx context.Context, marked func(step int64)) error
	// MarkMaster records the master's checkpoint of rec.Step: its file
	// and sha256, which a rollback to that step checks.
	MarkMaster(ctx context.Context, rec checkpoint.Record) error
	// Declare writes g, a newer global checkpoint, and drops the marks of
	// the steps before the oldest it keeps.
	Declare(ctx context.Context, g schema.GlobalCheckpoint) error
	// RollBack writes g, the record after a rollback to g.Step, and drops
	// the marks of the abandoned steps after it.
	RollBack(ctx context.Context, g schema.GlobalCheckpoint) error
}

// StateCheckpoints are the master's own checkpoints (checkpoint.Store).
type StateCheckpoints interface {
	Save(ctx context.Context, snap checkpoint.Snapshot) (checkpoint.Record, error)
	LoadStep(ctx context.Context, step int64) (*checkpoint.Snapshot, error)
}

// LayoutStore keeps the operator's re-shard request and the layout
// generations (schema.LayoutRecord).
type LayoutStore interface {
	Reshard(ctx context.Context) (schema.ReshardRequest, schema.LayoutRecord, error)
	// ReshardChanged fires at the request's next change and is closed when
	// ctx ends.
	ReshardChanged(ctx context.Context) <-chan struct{}
	Layout(ctx context.Context) (schema.LayoutRecord, error)
	// Commit records generation next from global checkpoint g
	// (coord.CommitLayout); coord.ErrLayoutMoved: the job record changed
	// under it.
	Commit(ctx context.Context, next schema.LayoutRecord, g schema.GlobalCheckpoint) error
	// Finish rewrites l with its pause recorded and appends the event what
	// in the same commit: a master killed between two writes left a
	// finished re-shard without its event (seen in CI).
	Finish(ctx context.Context, l schema.LayoutRecord, what string) error
}

// Events is the job's event log, as `gctl job events` shows it.
type Events interface {
	Event(ctx context.Context, what string) error
}

// Registration is a pserver's registration record with the lease that
// names its incarnation: a restarted pserver registers under a new one.
type Registration struct {
	schema.PserverRecord
	Lease int64
}

// PserverProber asks the pservers (through the layout in use) where they
// are, restores them, and reads their registrations.
type PserverProber interface {
	// Servers is the pserver count of the layout in use.
	Servers() int
	// Generation is the layout generation in use.
	Generation() int64
	// Refresh re-reads the pservers' addresses and layout.
	Refresh(ctx context.Context) error
	// Steps returns each pserver's step and rollback epoch, by index.
	Steps(ctx context.Context) (steps, epochs []int64, err error)
	// Restore puts every pserver at global checkpoint step in epoch.
	Restore(ctx context.Context, step, epoch int64) error
	// Registrations returns the registrations now and the revision to
	// watch from: the first after the read.
	Registrations(ctx context.Context) ([]Registration, int64, error)
	// WatchRegistrations calls registered with every registration written
	// from rev on, until ctx ends (nil), the watch fails or registered
	// returns an error (that error).
	WatchRegistrations(ctx context.Context, rev int64, registered func(Registration) error) error
}

// Ports is everything a Recovery works through.
type Ports struct {
	Driver      Driver
	Checkpoints CheckpointStore
	States      StateCheckpoints
	Layouts     LayoutStore
	Events      Events
	Pservers    PserverProber
}
