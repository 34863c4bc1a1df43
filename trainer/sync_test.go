package trainer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/internal/rolecfg"
	"github.com/gtrain/gtrain/internal/testing/logcheck"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/client"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// stepEpoch is a (step, epoch) pair as a request carries it.
type stepEpoch [2]int64

// fakeMaster hands out a scripted sequence of steps and records what the
// trainer tells it. The calls runSync does not make panic.
type fakeMaster struct {
	api.MasterClient
	steps  []*api.GetStepResponse
	refuse map[int]bool // indexes of the step reports to refuse
	// answerNext: a report asking for the next work gets the script's next
	// step in its answer, as a master does.
	answerNext bool
	answered   int // steps handed out that way
	asked      []stepEpoch
	reports    []stepEpoch
	rollbacks  []string
}

func (m *fakeMaster) GetStep(_ context.Context, r *api.GetStepRequest, _ ...grpc.CallOption) (*api.GetStepResponse, error) {
	m.asked = append(m.asked, stepEpoch{r.Step, r.Epoch})
	if len(m.steps) == 0 {
		return nil, status.Error(codes.Internal, "script ran out")
	}
	w := m.steps[0]
	m.steps = m.steps[1:]
	return w, nil
}

func (m *fakeMaster) StepDone(_ context.Context, r *api.StepDoneRequest, _ ...grpc.CallOption) (*api.StepDoneResponse, error) {
	m.reports = append(m.reports, stepEpoch{r.Step, r.Epoch})
	if m.refuse[len(m.reports)-1] {
		return nil, status.Error(codes.InvalidArgument, "stale report")
	}
	if !m.answerNext || !r.WantNext || len(m.steps) == 0 {
		return &api.StepDoneResponse{}, nil
	}
	m.answered++
	w := m.steps[0]
	m.steps = m.steps[1:]
	return &api.StepDoneResponse{Next: w}, nil
}

func (m *fakeMaster) RequestRollback(_ context.Context, r *api.RequestRollbackRequest, _ ...grpc.CallOption) (*api.RequestRollbackResponse, error) {
	m.rollbacks = append(m.rollbacks, fmt.Sprintf("epoch %d: %s", r.Epoch, r.Reason))
	return &api.RequestRollbackResponse{}, nil
}

// fakePservers answers pulls from a script and records the pushes.
type fakePservers struct {
	pulls  []pullAnswer
	pushes []stepEpoch
	// A PushPull brings back the next step's parameters (bring), or the
	// first hold ones wait for their context to end after the
	// acknowledgement, as for a step that lacks a micro-batch.
	bring bool
	hold  int
	// stuck counts held PushPulls that nobody stopped (given up after 2 s).
	stuck int
	// refusePush is the error of the first push; refreshTo the layout
	// generation committed after it (gen: the one in use), as a re-shard
	// that cut the pservers anew under the push; a Refresh finds it unless
	// slowRefresh (the new layout's pservers not all found yet).
	refusePush  error
	gen         int64
	refreshTo   int64
	moved       bool
	slowRefresh bool
}

type pullAnswer struct {
	lowest, highest int64
	err             error
}

func (p *fakePservers) Pull(_ context.Context, _, _ int64, _ [][]float32) (int64, int64, error) {
	if len(p.pulls) == 0 {
		return 0, 0, status.Error(codes.Internal, "script ran out")
	}
	a := p.pulls[0]
	p.pulls = p.pulls[1:]
	p.moved = p.moved || (a.err != nil && p.refreshTo > 0)
	return a.lowest, a.highest, a.err
}

func (p *fakePservers) Push(_ context.Context, _ int, step, epoch, _ int64, _ bool, _ [][]float32, _ ...client.PushOption) error {
	if err := p.refusePush; err != nil {
		p.refusePush, p.moved = nil, true
		return err
	}
	p.pushes = append(p.pushes, stepEpoch{step, epoch})
	return nil
}

func (p *fakePservers) PushPull(ctx context.Context, mb int, step, epoch, records int64, ckpt bool, grads, _ [][]float32, accepted func(), _ ...client.PushOption) (client.Pulled, error) {
	if err := p.Push(ctx, mb, step, epoch, records, ckpt, grads); err != nil {
		return client.Pulled{}, err
	}
	if accepted != nil {
		accepted()
	}
	switch {
	case p.bring:
		return client.Pulled{All: true, Lowest: step + 1, Highest: step + 1}, nil
	case p.hold > 0:
		p.hold--
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
			p.stuck++
		}
	}
	return client.Pulled{}, nil
}

func (p *fakePservers) Refresh(context.Context) error {
	if p.moved && !p.slowRefresh {
		p.gen = max(p.gen, p.refreshTo)
	}
	return nil
}

func (p *fakePservers) Generation() int64 { return p.gen }

func (p *fakePservers) Committed(context.Context) (int64, error) {
	if p.moved {
		return max(p.gen, p.refreshTo), nil
	}
	return p.gen, nil
}

func (p *fakePservers) PullBatchRows(context.Context, []model.RecTable, *model.RecBatch, int64, int64) error {
	return errors.New("fakePservers: no embedding rows")
}

func (p *fakePservers) PushBatchRows(context.Context, int, int64, int64, int64, []model.RecTable, *model.RecBatch, [][]float32) error {
	return errors.New("fakePservers: no embedding rows")
}

// fakeTrainer is trainer-0 of job "fit" over the fakes, logging as
// `gtraind trainer` does (its logger holds role, job and index).
func fakeTrainer(t *testing.T, m *fakeMaster, ps *fakePservers, out *bytes.Buffer) *trainer {
	log := logcheck.Logger(t, slog.NewTextHandler(out, nil)).With("role", "trainer", "job", "fit", "index", 0)
	tr := &trainer{cfg: Config{Common: rolecfg.Common{Job: "fit"}, Worker: "trainer-0", Deadline: time.Second}, log: log, clock: clock.System{}, data: newChunkCache(1), ps: ps,
		spec: &jobspec.Spec{Seed: 1}}
	tr.master = &masterConn{t: tr, client: m}
	return tr
}

func ready(step, epoch int64) *api.GetStepResponse {
	return &api.GetStepResponse{Status: api.WorkStatus_WORK_READY, Step: step, Epoch: epoch}
}

// rollbackScenario is the master's and the pservers' script of a rollback:
// pservers disagree at step 1, the job rolls back to step 0 (which they
// applied), a pull aborts, a report is refused, and the step turns out
// applied. answerNext: the master answers each report with the next work.
func rollbackScenario(answerNext bool) (*fakeMaster, *fakePservers) {
	m := &fakeMaster{
		steps: []*api.GetStepResponse{
			ready(0, 1), ready(1, 1), // pservers disagree at step 1
			ready(0, 2), {Status: api.WorkStatus_WORK_WAIT}, // rolled back to step 0, which the pservers applied
			ready(1, 2), ready(1, 2), ready(1, 2), // pull aborted; report refused; pservers applied it
			{Status: api.WorkStatus_WORK_DONE},
		},
		refuse:     map[int]bool{2: true},
		answerNext: answerNext,
	}
	ps := &fakePservers{pulls: []pullAnswer{
		{0, 0, nil}, {1, 2, nil},
		{1, 1, nil},
		{0, 0, status.Error(codes.Aborted, "rolled back")}, {1, 1, nil}, {2, 2, nil},
	}}
	return m, ps
}

// The sync loop through a rollback and the resyncs: a push the pservers
// already applied is not pushed twice, and disagreeing pservers make the
// trainer ask for a rollback.
func TestRunSyncThroughARollback(t *testing.T) {
	m, ps := rollbackScenario(false)
	var out bytes.Buffer
	if err := fakeTrainer(t, m, ps, &out).runSync(context.Background(), 0); err != nil {
		t.Fatalf("runSync: %v\n%s", err, out.String())
	}
	want := struct{ asked, reports, pushes []stepEpoch }{
		// After a resync: 0, "where the job is"; after a micro-batch: the
		// same step, the master choosing the next micro-batch.
		asked:   []stepEpoch{{0, 0}, {0, 1}, {0, 1}, {0, 2}, {0, 2}, {0, 2}, {0, 2}, {1, 2}},
		reports: []stepEpoch{{0, 1}, {0, 2}, {1, 2}, {1, 2}},
		pushes:  []stepEpoch{{0, 1}, {1, 2}},
	}
	if !slices.Equal(m.asked, want.asked) || !slices.Equal(m.reports, want.reports) || !slices.Equal(ps.pushes, want.pushes) {
		t.Errorf("asked %v, reported %v, pushed %v; want %v, %v, %v", m.asked, m.reports, ps.pushes, want.asked, want.reports, want.pushes)
	}
	wantRollback := "epoch 1: trainer-0 found pservers at steps 1 and 2 for step 1"
	if len(m.rollbacks) != 1 || m.rollbacks[0] != wantRollback {
		t.Errorf("rollbacks %q, want [%q]", m.rollbacks, wantRollback)
	}
	for _, line := range []string{"pservers disagree", "the job rolled back", "step report refused", "training done"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("log lacks %q:\n%s", line, out.String())
		}
	}
}

// The same, with the master answering each report with the next work: the
// trainer computes, pushes and reports exactly the same, and asks with
// GetStep only when no report carried its next work (at the start, after a
// resync, after a WAIT).
func TestRunSyncTakesTheNextWorkFromTheReport(t *testing.T) {
	m, ps := rollbackScenario(true)
	var out bytes.Buffer
	if err := fakeTrainer(t, m, ps, &out).runSync(context.Background(), 0); err != nil {
		t.Fatalf("runSync: %v\n%s", err, out.String())
	}
	wantAsked := []stepEpoch{{0, 0}, {0, 1}, {0, 2}, {0, 2}, {0, 2}}
	wantReports := []stepEpoch{{0, 1}, {0, 2}, {1, 2}, {1, 2}}
	wantPushes := []stepEpoch{{0, 1}, {1, 2}}
	if !slices.Equal(m.asked, wantAsked) || m.answered != 3 || !slices.Equal(m.reports, wantReports) || !slices.Equal(ps.pushes, wantPushes) {
		t.Errorf("asked %v (+%d in report answers), reported %v, pushed %v; want %v (+3), %v, %v",
			m.asked, m.answered, m.reports, ps.pushes, wantAsked, wantReports, wantPushes)
	}
}

// A pull that fails for good ends the loop with its error.
func TestRunSyncFailsWithThePull(t *testing.T) {
	m := &fakeMaster{steps: []*api.GetStepResponse{ready(0, 1)}}
	ps := &fakePservers{pulls: []pullAnswer{{0, 0, status.Error(codes.Internal, "disk on fire")}}}
	var out bytes.Buffer
	err := fakeTrainer(t, m, ps, &out).runSync(context.Background(), 0)
	if status.Code(err) != codes.Internal || len(ps.pushes) != 0 || len(m.reports) != 0 {
		t.Errorf("runSync = %v after pushing %v and reporting %v; want the pull's error, nothing pushed or reported", err, ps.pushes, m.reports)
	}
}

// A push that brought back the next step's parameters spares the next
// micro-batch's pull when it is of that step.
func TestRunSyncPushBringsTheNextStep(t *testing.T) {
	withPull := func(w *api.GetStepResponse) *api.GetStepResponse { w.PullWithPush = true; return w }
	m := &fakeMaster{answerNext: true, steps: []*api.GetStepResponse{withPull(ready(0, 1)), withPull(ready(1, 1)),
		{Status: api.WorkStatus_WORK_DONE}}}
	ps := &fakePservers{bring: true, pulls: []pullAnswer{{0, 0, nil}}} // one pull: step 0's
	var out bytes.Buffer
	if err := fakeTrainer(t, m, ps, &out).runSync(context.Background(), 0); err != nil {
		t.Fatalf("runSync: %v (a second pull ran out of the script)\n%s", err, out.String())
	}
	if want := []stepEpoch{{0, 1}, {1, 1}}; !slices.Equal(ps.pushes, want) || !slices.Equal(m.reports, want) {
		t.Errorf("pushed %v, reported %v; want %v both", ps.pushes, m.reports, want)
	}
}

// A push waiting for its step stops waiting when the master's answer to its
// report is another micro-batch of the same step: only this trainer can
// complete the step.
func TestRunSyncStopsWaitingForItsOwnStep(t *testing.T) {
	mb := func(n int32) *api.GetStepResponse {
		w := ready(0, 1)
		w.MicroBatch, w.PullWithPush = n, true
		return w
	}
	m := &fakeMaster{answerNext: true, steps: []*api.GetStepResponse{mb(0), mb(1), {Status: api.WorkStatus_WORK_DONE}}}
	ps := &fakePservers{hold: 1, pulls: []pullAnswer{{0, 0, nil}, {0, 0, nil}}}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := fakeTrainer(t, m, ps, &out).runSync(ctx, 0); err != nil {
		t.Fatalf("runSync: %v (the first push kept waiting)\n%s", err, out.String())
	}
	if want := []stepEpoch{{0, 1}, {0, 1}}; !slices.Equal(ps.pushes, want) || ps.stuck != 0 {
		t.Errorf("pushed %v, want %v; %d pushes kept waiting for their step", ps.pushes, want, ps.stuck)
	}
}

// Parameters a push brought back are of one step in one epoch: the next
// work of that step in a new epoch (a rollback meanwhile) is pulled.
func TestRunSyncPullsAfterARollbackDespiteThePush(t *testing.T) {
	withPull := func(w *api.GetStepResponse) *api.GetStepResponse { w.PullWithPush = true; return w }
	m := &fakeMaster{answerNext: true, steps: []*api.GetStepResponse{withPull(ready(0, 1)), withPull(ready(1, 2)),
		{Status: api.WorkStatus_WORK_DONE}}}
	ps := &fakePservers{bring: true, pulls: []pullAnswer{{0, 0, nil}, {1, 1, nil}}}
	var out bytes.Buffer
	if err := fakeTrainer(t, m, ps, &out).runSync(context.Background(), 0); err != nil {
		t.Fatalf("runSync: %v\n%s", err, out.String())
	}
	if len(ps.pulls) != 0 {
		t.Errorf("%d pulls left unmade: step 1 of epoch 2 used the parameters brought for epoch 1", len(ps.pulls))
	}
	if want := []stepEpoch{{0, 1}, {1, 2}}; !slices.Equal(ps.pushes, want) {
		t.Errorf("pushed %v, want %v", ps.pushes, want)
	}
}

// A push refused as malformed because the pservers moved to a new layout
// while it was under way (a re-shard) sends the trainer back to the master,
// not out with an error, even when the new layout's pservers are not all
// found yet (slow: the committed layout says it moved); the same refusal
// under an unchanged layout is the fault it says.
func TestRunSyncResyncsWhenTheLayoutMovedUnderThePush(t *testing.T) {
	bounds := status.Error(codes.InvalidArgument, "block 3 offset 0 len 1024 (block len 512): gradient data out of the block's bounds")
	for _, c := range []struct{ moved, slow bool }{{true, false}, {true, true}, {false, false}} {
		moved := c.moved
		m := &fakeMaster{steps: []*api.GetStepResponse{ready(0, 1), ready(0, 2), {Status: api.WorkStatus_WORK_DONE}}}
		ps := &fakePservers{refusePush: bounds, pulls: []pullAnswer{{0, 0, nil}, {0, 0, nil}}, slowRefresh: c.slow}
		if moved {
			ps.refreshTo = 1
		}
		var out bytes.Buffer
		err := fakeTrainer(t, m, ps, &out).runSync(context.Background(), 0)
		switch {
		case moved && (err != nil || !slices.Equal(ps.pushes, []stepEpoch{{0, 2}}) || !strings.Contains(out.String(), "new layout during the push")):
			t.Errorf("layout moved (new pservers found late: %v): runSync = %v, pushed %v; want a resync, then step 0 of epoch 2 pushed\n%s", c.slow, err, ps.pushes, out.String())
		case !moved && status.Code(err) != codes.InvalidArgument:
			t.Errorf("layout unchanged: runSync = %v; want the refusal", err)
		}
	}
}

// A pull cut over the old layout that the new cut answered (the client
// refuses a block it did not expect: a plain error) resyncs too, once the
// layout moved; under an unchanged layout it fails the trainer.
func TestRunSyncResyncsWhenTheLayoutMovedUnderThePull(t *testing.T) {
	for _, moved := range []bool{true, false} {
		m := &fakeMaster{steps: []*api.GetStepResponse{ready(0, 1), ready(0, 2), {Status: api.WorkStatus_WORK_DONE}}}
		ps := &fakePservers{pulls: []pullAnswer{{0, 0, errors.New("unexpected block 3")}, {0, 0, nil}}}
		if moved {
			ps.refreshTo = 1
		}
		var out bytes.Buffer
		err := fakeTrainer(t, m, ps, &out).runSync(context.Background(), 0)
		switch {
		case moved && (err != nil || !slices.Equal(ps.pushes, []stepEpoch{{0, 2}})):
			t.Errorf("layout moved: runSync = %v, pushed %v; want a resync, then step 0 of epoch 2 pushed\n%s", err, ps.pushes, out.String())
		case !moved && err == nil:
			t.Errorf("layout unchanged: runSync = nil, pushed %v; want the pull's error", ps.pushes)
		}
	}
}
