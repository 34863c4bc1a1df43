package recovery

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gtrain/gtrain/checkpoint"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/master/core"
	"github.com/gtrain/gtrain/pserver/client"
)

// In-memory ports: each keeps what etcd, the pservers or the driver would,
// and records what recovery asked of it, for the decisions' tests.

// fakeDriver is a driver at (pass, step, epoch); a rollback puts it at the
// state's step, plus advance (the steps trainers commit at once after it).
type fakeDriver struct {
	mu          sync.Mutex
	pass        int
	step, epoch int64
	done        bool
	finishing   bool
	paused      int
	catchUpErr  error
	caughtUp    int64 // the step CatchUp was last asked for
	rolledBack  []*core.State
	advance     int64
	checkpoints int // CheckpointNext calls
	changed     chan struct{}
}

func newFakeDriver(step, epoch int64) *fakeDriver {
	return &fakeDriver{step: step, epoch: epoch, caughtUp: -1, changed: make(chan struct{})}
}

func (d *fakeDriver) Snapshots() <-chan core.State { return nil }
func (d *fakeDriver) Changed() <-chan struct{}     { return d.changed }
func (d *fakeDriver) CheckpointNext()              { d.mu.Lock(); d.checkpoints++; d.mu.Unlock() }
func (d *fakeDriver) Pause()                       { d.mu.Lock(); d.paused++; d.mu.Unlock() }

func (d *fakeDriver) Position() (int, int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.pass, d.step
}

func (d *fakeDriver) Epoch() int64 { d.mu.Lock(); defer d.mu.Unlock(); return d.epoch }
func (d *fakeDriver) Done() bool   { d.mu.Lock(); defer d.mu.Unlock(); return d.done }

func (d *fakeDriver) PauseUnlessFinishing() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.finishing || d.done {
		return false
	}
	d.paused++
	return true
}

func (d *fakeDriver) CatchUp(ctx context.Context, step int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.caughtUp = step
	if d.catchUpErr != nil {
		return d.catchUpErr
	}
	d.step = step
	return nil
}

func (d *fakeDriver) Rollback(ctx context.Context, state *core.State, epoch int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rolledBack = append(d.rolledBack, state)
	d.step, d.pass, d.epoch = 0, 0, epoch
	if state != nil {
		d.step, d.pass = state.Meta.Step, state.Meta.Pass
	}
	d.step += d.advance
	return nil
}

// fakeCheckpoints is the global checkpoint record and the marks.
type fakeCheckpoints struct {
	mu       sync.Mutex
	g        schema.GlobalCheckpoint
	rev      int64 // 0: no record
	marks    map[int64][]string
	declared []schema.GlobalCheckpoint
	rolled   []schema.GlobalCheckpoint
	changed  chan struct{} // closed at the record's next change
}

func newFakeCheckpoints(g schema.GlobalCheckpoint) *fakeCheckpoints {
	c := &fakeCheckpoints{g: g, marks: map[int64][]string{}, changed: make(chan struct{})}
	if g.Step > 0 {
		c.rev = 1
	}
	return c
}

// set writes the record, as a declaration elsewhere would.
func (c *fakeCheckpoints) set(g schema.GlobalCheckpoint) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.g, c.rev = g, c.rev+1
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *fakeCheckpoints) Global(ctx context.Context) (schema.GlobalCheckpoint, int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.g, c.rev, nil
}

func (c *fakeCheckpoints) GlobalChanged(ctx context.Context, rev int64) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(chan struct{}, 1)
	if rev > 0 && c.rev >= rev { // changed since
		out <- struct{}{}
		return out
	}
	changed := c.changed
	go func() {
		select {
		case <-changed:
			out <- struct{}{}
		case <-ctx.Done():
			close(out)
		}
	}()
	return out
}

func (c *fakeCheckpoints) Marks(ctx context.Context, step int64) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.marks[step]), nil
}

func (c *fakeCheckpoints) WatchMarks(ctx context.Context, marked func(step int64)) error {
	<-ctx.Done()
	return nil
}

func (c *fakeCheckpoints) MarkMaster(ctx context.Context, rec checkpoint.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.marks[rec.Step] = append(c.marks[rec.Step], coord.MasterMark)
	return nil
}

func (c *fakeCheckpoints) Declare(ctx context.Context, g schema.GlobalCheckpoint) error {
	c.mu.Lock()
	c.declared = append(c.declared, g)
	c.mu.Unlock()
	c.set(g)
	return nil
}

func (c *fakeCheckpoints) RollBack(ctx context.Context, g schema.GlobalCheckpoint) error {
	c.mu.Lock()
	c.rolled = append(c.rolled, g)
	for s := range c.marks {
		if s > g.Step {
			delete(c.marks, s)
		}
	}
	c.mu.Unlock()
	c.set(g)
	return nil
}

// fakeStates are the master's checkpoints, by step.
type fakeStates struct {
	mu    sync.Mutex
	snaps map[int64]checkpoint.Snapshot
}

// withState records a master checkpoint of step at pass.
func (s *fakeStates) withState(t *testing.T, step int64, pass int) *fakeStates {
	t.Helper()
	meta := fmt.Sprintf(`{"meta":{"step":%d,"pass":%d}}`, step, pass)
	if _, err := s.Save(t.Context(), checkpoint.Snapshot{Step: step, Meta: []byte(meta)}); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *fakeStates) Save(ctx context.Context, snap checkpoint.Snapshot) (checkpoint.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snaps == nil {
		s.snaps = map[int64]checkpoint.Snapshot{}
	}
	s.snaps[snap.Step] = snap
	return checkpoint.Record{Step: snap.Step, File: fmt.Sprintf("step-%d", snap.Step)}, nil
}

func (s *fakeStates) LoadStep(ctx context.Context, step int64) (*checkpoint.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap, ok := s.snaps[step]
	if !ok {
		return nil, fmt.Errorf("no checkpoint of step %d: %w", step, checkpoint.ErrNoCheckpoint)
	}
	return &snap, nil
}

// fakeLayouts is the re-shard request and the layout record; a commit
// reduces the global checkpoint to the layout's step, as coord.CommitLayout.
type fakeLayouts struct {
	mu           sync.Mutex
	req          schema.ReshardRequest
	layout       schema.LayoutRecord
	moved        int // commits still to refuse with coord.ErrLayoutMoved
	commits      []schema.LayoutRecord
	finished     []schema.LayoutRecord
	finishEvents []string // the event each Finish recorded with it
	cps          *fakeCheckpoints
}

func (l *fakeLayouts) Reshard(ctx context.Context) (schema.ReshardRequest, schema.LayoutRecord, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.req, l.layout, nil
}

func (l *fakeLayouts) ReshardChanged(ctx context.Context) <-chan struct{} { return ctx.Done() }

func (l *fakeLayouts) Layout(ctx context.Context) (schema.LayoutRecord, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.layout, nil
}

func (l *fakeLayouts) Commit(ctx context.Context, next schema.LayoutRecord, g schema.GlobalCheckpoint) error {
	l.mu.Lock()
	l.commits = append(l.commits, next)
	if l.moved > 0 {
		l.moved--
		l.mu.Unlock()
		return fmt.Errorf("job j: %w", coord.ErrLayoutMoved)
	}
	l.layout = next
	l.mu.Unlock()
	l.cps.set(schema.GlobalCheckpoint{Step: next.FromStep, Pass: g.Pass, Steps: []int64{next.FromStep}})
	return nil
}

func (l *fakeLayouts) Finish(ctx context.Context, rec schema.LayoutRecord, what string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.finished = append(l.finished, rec)
	l.finishEvents = append(l.finishEvents, what)
	l.layout = rec
	return nil
}

type fakeEvents struct {
	mu   sync.Mutex
	what []string
}

func (e *fakeEvents) Event(ctx context.Context, what string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.what = append(e.what, what)
	return nil
}

// has reports whether an event says every one of parts.
func (e *fakeEvents) has(parts ...string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, w := range e.what {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(w, p)
		}
		if all {
			return true
		}
	}
	return false
}

// restore is one Restore call.
type restore struct{ step, epoch int64 }

// fakePservers are pservers at steps and epochs, by index; a refresh takes
// up the layout record (as client.Dynamic does).
type fakePservers struct {
	mu            sync.Mutex
	steps, epochs []int64
	stepsErr      error
	gen           int64
	restores      []restore
	regs          []Registration
	watched       []Registration // what WatchRegistrations delivers
	layouts       *fakeLayouts
	unusable      map[int64]bool // steps whose checkpoint a pserver refuses to load
}

func (p *fakePservers) Servers() int      { p.mu.Lock(); defer p.mu.Unlock(); return len(p.steps) }
func (p *fakePservers) Generation() int64 { p.mu.Lock(); defer p.mu.Unlock(); return p.gen }

func (p *fakePservers) Refresh(ctx context.Context) error {
	l, _ := p.layouts.Layout(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	if l.Generation > p.gen {
		p.gen = l.Generation
		p.steps, p.epochs = make([]int64, l.Pservers), make([]int64, l.Pservers)
	}
	return nil
}

func (p *fakePservers) Steps(ctx context.Context) ([]int64, []int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.steps), slices.Clone(p.epochs), p.stepsErr
}

func (p *fakePservers) Restore(ctx context.Context, step, epoch int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.restores = append(p.restores, restore{step, epoch})
	if p.unusable[step] {
		// As client.Restore answers a pserver's codes.DataLoss.
		p.epochs[0] = epoch // the others were restored before one refused
		return fmt.Errorf("restore pserver 1 to step %d: %w: sha256 differs from its record", step, client.ErrCheckpointUnusable)
	}
	for i := range p.steps {
		p.steps[i], p.epochs[i] = step, epoch
	}
	return nil
}

func (p *fakePservers) Registrations(ctx context.Context) ([]Registration, int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.regs), 100, nil
}

func (p *fakePservers) WatchRegistrations(ctx context.Context, rev int64, registered func(Registration) error) error {
	for _, reg := range p.watched {
		if err := registered(reg); err != nil {
			return err
		}
	}
	return nil // the watch ended
}

// world is a Recovery on fakes: a sync job with len(steps) pservers at
// steps and epochs, the global checkpoint g, a master at (step, epoch).
type world struct {
	driver  *fakeDriver
	cps     *fakeCheckpoints
	states  *fakeStates
	layouts *fakeLayouts
	events  *fakeEvents
	ps      *fakePservers
	r       *Recovery
}

func newWorld(g schema.GlobalCheckpoint, step, epoch int64, steps, epochs []int64) *world {
	w := &world{driver: newFakeDriver(step, epoch), cps: newFakeCheckpoints(g), states: &fakeStates{}, events: &fakeEvents{}}
	w.layouts = &fakeLayouts{cps: w.cps}
	w.ps = &fakePservers{steps: steps, epochs: epochs, layouts: w.layouts}
	w.r = New(Ports{Driver: w.driver, Checkpoints: w.cps, States: w.states, Layouts: w.layouts, Events: w.events, Pservers: w.ps}, 3, nil)
	return w
}
