package trainer

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/cpuaffinity"
	"github.com/gtrain/gtrain/internal/testing/torchtest"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/program"
	"github.com/gtrain/gtrain/pserver/client"
	"google.golang.org/grpc"
)

// slowMaster is a fakeMaster whose step reports take delay: the push's
// parameters are back before the report's answer, the window an early
// micro-batch starts in. Each report is told on entered as it arrives.
type slowMaster struct {
	*fakeMaster
	delay   time.Duration
	entered chan struct{}
}

func (m *slowMaster) StepDone(ctx context.Context, r *api.StepDoneRequest, opts ...grpc.CallOption) (*api.StepDoneResponse, error) {
	m.entered <- struct{}{}
	time.Sleep(m.delay)
	return m.fakeMaster.StepDone(ctx, r, opts...)
}

// gradPservers is a fakePservers that keeps the gradients of every push
// and gives each step's parameters their own values (stepParams), pulled
// or brought back by a PushPull. It ignores the push's options, which a
// real push waits for each gradient by: it copies the gradients once the
// step's report arrived (reported), which the trainer sends once the
// gradient is computed, then writes the next step's parameters and
// returns.
type gradPservers struct {
	*fakePservers
	reported <-chan struct{}
	grads    [][]float32 // each push's, flattened
}

// stepParams writes step's parameters into params.
func stepParams(params [][]float32, step int64) {
	for j, p := range params {
		for i := range p {
			p[i] = 0.01 * float32(step+1) * float32(j+i+1)
		}
	}
}

func (p *gradPservers) Pull(ctx context.Context, step, epoch int64, params [][]float32) (int64, int64, error) {
	lowest, highest, err := p.fakePservers.Pull(ctx, step, epoch, params)
	if err == nil {
		stepParams(params, step)
	}
	return lowest, highest, err
}

func (p *gradPservers) PushPull(ctx context.Context, mb int, step, epoch, records int64, ckpt bool, grads, params [][]float32, accepted func(), opts ...client.PushOption) (client.Pulled, error) {
	pulled, err := p.fakePservers.PushPull(ctx, mb, step, epoch, records, ckpt, grads, params, accepted, opts...)
	if err == nil {
		<-p.reported
		p.grads = append(p.grads, slices.Concat(grads...))
		if pulled.All {
			stepParams(params, step+1)
		}
	}
	return pulled, err
}

// earlyChange is one scenario of the early micro-batch tests: the
// master's script differs from the right one (hints naming the next
// step's records) as it says.
type earlyChange struct {
	id           int     // the trainer's
	hints        []int32 // the chunk step 0's and step 1's hints name
	mb1, epoch1  int     // step 1's micro-batch and epoch
	noParamsBack bool    // the pushes bring no parameters back
}

// earlyScript is the master of the early tests, whose reports take 30 ms,
// and the pservers' parameter pulls: 3 steps of chunks 0, 1 and 2 of path
// (one micro-batch of 4 records each) whose pushes bring back the next
// step's parameters, hints and all changed as c says.
func earlyScript(path string, c earlyChange) (*slowMaster, []pullAnswer) {
	chunk := func(c int32) []*api.Slice { return []*api.Slice{{File: path, Chunk: c, First: 0, Count: 4}} }
	var steps []*api.GetStepResponse
	for s := range 3 {
		w := ready(int64(s), 1)
		w.Slices, w.PullWithPush = chunk(int32(s)), true
		if s < 2 {
			w.NextSlices = chunk(c.hints[s])
		}
		if s >= 1 && c.epoch1 != 0 {
			w.Epoch = int64(c.epoch1)
		}
		if s == 1 {
			w.MicroBatch = int32(c.mb1)
		}
		steps = append(steps, w)
	}
	steps = append(steps, &api.GetStepResponse{Status: api.WorkStatus_WORK_DONE})
	m := &slowMaster{fakeMaster: &fakeMaster{steps: steps, answerNext: true}, delay: 30 * time.Millisecond,
		entered: make(chan struct{}, 1)}
	pulls := []pullAnswer{{0, 0, nil}, {1, 1, nil}, {2, 2, nil}}
	if !c.noParamsBack && c.epoch1 == 0 {
		pulls = pulls[:1]
	} else if !c.noParamsBack {
		pulls = pulls[:2] // step 1 of the new epoch is pulled
	}
	return m, pulls
}

// runEarly trains 3 steps of chunks 0, 1 and 2 of path (one micro-batch
// of 4 records each) as c says, with the model setModel gives the trainer,
// and returns the trainer and its pushed gradients.
func runEarly(t *testing.T, path string, c earlyChange, setModel func(tr *trainer)) (*trainer, [][]float32) {
	t.Helper()
	m, pulls := earlyScript(path, c)
	ps := &gradPservers{fakePservers: &fakePservers{pulls: pulls, bring: !c.noParamsBack}, reported: m.entered}
	var out bytes.Buffer
	tr := fakeTrainer(t, nil, nil, &out)
	tr.master.client, tr.ps, tr.id = m, ps, c.id
	setModel(tr)
	tr.data.open = os.Open
	err := tr.runSync(context.Background(), 0)
	if tr.prog != nil {
		tr.prog.Close() // the next run starts its own
	}
	if err != nil {
		t.Fatalf("%+v: runSync: %v\n%s", c, err, out.String())
	}
	if len(m.reports) != 3 || len(ps.pulls) != 0 {
		t.Fatalf("%+v: reports %v, want steps 0, 1 and 2; pulls left %v\n%s", c, m.reports, ps.pulls, out.String())
	}
	return tr, ps.grads
}

// checkEarly runs the right hints and then each change, and checks how
// many early micro-batches each took and dropped and that all pushed the
// right hints' gradients, which differ from step to step.
func checkEarly(t *testing.T, path string, setModel func(tr *trainer), changes []earlyCase) {
	t.Helper()
	right, pushed := runEarly(t, path, earlyChange{hints: []int32{1, 2}}, setModel)
	if right.earlyTaken != 2 || right.earlyDropped != 0 {
		t.Fatalf("right hints: %d early micro-batches taken, %d dropped; want 2 and 0", right.earlyTaken, right.earlyDropped)
	}
	if ahead := right.computesAhead(); (right.earlyAhead == 2) != ahead {
		t.Fatalf("right hints: %d early micro-batches started ahead of their parameters; want 2 with compute CPUs or a program accepting it, else 0 (ahead: %v)", right.earlyAhead, ahead)
	}
	if slices.Equal(pushed[0], pushed[1]) || slices.Equal(pushed[1], pushed[2]) {
		t.Fatalf("the steps' gradients are alike (%v): the test cannot tell them apart", pushed)
	}
	for _, c := range changes {
		tr, got := runEarly(t, path, c.change, setModel)
		if tr.earlyTaken != c.taken || tr.earlyDropped != c.dropped {
			t.Errorf("%s: %d early micro-batches taken, %d dropped; want %d and %d", c.what, tr.earlyTaken, tr.earlyDropped, c.taken, c.dropped)
		}
		if !slices.EqualFunc(pushed, got, slices.Equal) {
			t.Errorf("%s: pushed gradients %v, want %v", c.what, got, pushed)
		}
	}
}

type earlyCase struct {
	what           string
	change         earlyChange
	taken, dropped int
}

// TestEarlyMicroBatchIsTheNamedOne: with the step reports slower than the
// pushes, a trainer computes each next micro-batch early from the master's
// hint and pushes it once the report's answer names the same work. An
// answer naming other work drops it and computes the work named: other
// records than the hint's (a wrong hint), another micro-batch, or another
// epoch (a rollback). A trainer working on another's micro-batch (trainer
// 1 on micro-batch 0), or whose push did not bring back the next step's
// parameters, starts none. All push the same gradients: those of the
// works' records at their steps' parameters.
func TestEarlyMicroBatchIsTheNamedOne(t *testing.T) {
	path := writeShard(t, 12) // chunks of 4; record i has feature and label i
	checkEarly(t, path, linearModel(t), earlyCases)
}

// earlyCases are the built-in model's changes of the early micro-batch tests.
var earlyCases = []earlyCase{
	{"wrong hints", earlyChange{hints: []int32{2, 0}}, 0, 2},
	{"step 1 another micro-batch", earlyChange{hints: []int32{1, 2}, mb1: 1}, 0, 1},
	{"step 1 in a new epoch", earlyChange{hints: []int32{1, 2}, epoch1: 2}, 1, 1},
	{"another trainer's micro-batch", earlyChange{id: 1, hints: []int32{1, 2}}, 0, 0},
	{"no parameters brought back", earlyChange{hints: []int32{1, 2}, noParamsBack: true}, 0, 0},
}

// linearModel gives a trainer a linear model of one input and one output.
func linearModel(t *testing.T) func(tr *trainer) {
	return func(tr *trainer) {
		tr.spec = &jobspec.Spec{Seed: 1, Pservers: 1, Model: jobspec.ModelSpec{Kind: "linear", Inputs: 1, Outputs: 1}}
		var err error
		if tr.layout, err = client.NewLayout(tr.spec); err != nil {
			t.Fatal(err)
		}
		tr.params, tr.grads = tr.layout.NewParams(), tr.layout.NewParams()
	}
}

// TestEarlyMicroBatchAheadIsTheNamedOne: the same for a trainer computing
// on CPUs of its own, whose early micro-batch starts before its push's
// parameters are back (ahead.go): here the fake pservers write them when
// the push returns, so the forward pass waits for them.
func TestEarlyMicroBatchAheadIsTheNamedOne(t *testing.T) {
	path := writeShard(t, 12)
	cpus, err := cpuaffinity.Allowed()
	if err != nil {
		t.Fatal(err)
	}
	linearOwnCPUs := func(tr *trainer) {
		linearModel(t)(tr)
		tr.cfg.ComputeCPUs = cpus // all of the test's: pinned, it runs where it did
		t.Cleanup(tr.startComputeThread())
	}
	checkEarly(t, path, linearOwnCPUs, earlyCases)
}

// TestEarlyMicroBatchOfAProgram: the same with a PyTorch program whose
// module has dropout, so each gradient depends on its request's seed (its
// step and micro-batch) as well as on the parameters and records: an
// early micro-batch asked with another seed than its work's would push
// other gradients than the one computed once named. The program computes
// through shared memory, telling each gradient as it is final.
func TestEarlyMicroBatchOfAProgram(t *testing.T) {
	torchtest.Need(t)
	path := writeShard(t, 12)
	ws := filepath.Join(repoRoot(t), "program", "testdata")
	withProgram := func(tr *trainer) {
		c, err := program.Start(program.Config{Argv: []string{torchtest.Python, filepath.Join(ws, "torch_dropout.py")}, Dir: ws, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		d, err := c.Declare(context.Background(), program.DeclareArgs{Seed: 1, Inputs: 1, Outputs: 12, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		tr.spec = &jobspec.Spec{Seed: 1, Pservers: 1, Model: jobspec.ModelSpec{Kind: "program", Inputs: 1, Outputs: 12, Declared: d.Record()}}
		if tr.layout, err = client.NewLayout(tr.spec); err != nil {
			t.Fatal(err)
		}
		tr.prog = c
		tr.params, tr.grads = c.Buffers()
		if tr.params == nil || !c.Progress() || !c.Ahead() {
			t.Fatalf("the program computes without shared memory (%v), progress frames (%v) or requests sent ahead (%v)", c.Shared(), c.Progress(), c.Ahead())
		}
	}
	// The program computes ahead (it accepted at declare); a computation
	// ahead whose parameters do not come is stopped. Not "another
	// micro-batch": its seed, and so its dropout, is another micro-batch's.
	var cases []earlyCase
	for _, c := range earlyCases {
		if c.change.mb1 == 0 {
			cases = append(cases, c)
		}
	}
	checkEarly(t, path, withProgram, cases)
}

// repoRoot is the repository's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}
