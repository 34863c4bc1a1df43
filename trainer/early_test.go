package trainer

import (
	"bytes"
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/jobspec"
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

// gradPservers is a fakePservers that keeps the gradients of every push.
// It ignores the push's options, which a real push waits for each gradient
// by: it copies them once the step's report arrived (reported), which the
// trainer sends once the gradient is computed, and returns after.
type gradPservers struct {
	*fakePservers
	reported <-chan struct{}
	grads    [][]float32 // each push's, flattened
}

func (p *gradPservers) PushPull(ctx context.Context, mb int, step, epoch, records int64, ckpt bool, grads, params [][]float32, accepted func(), opts ...client.PushOption) (client.Pulled, error) {
	pulled, err := p.fakePservers.PushPull(ctx, mb, step, epoch, records, ckpt, grads, params, accepted, opts...)
	if err == nil {
		<-p.reported
		p.grads = append(p.grads, slices.Concat(grads...))
	}
	return pulled, err
}

// TestEarlyMicroBatchIsTheNamedOne: with the step reports slower than the
// pushes, a trainer computes each next micro-batch early from the master's
// hint and pushes it once the report's answer names the same work; when
// the hint names other records than the work (a wrong hint), the early
// micro-batch is dropped and the work's own records computed. A trainer
// working on another's micro-batch (trainer 1 on micro-batch 0) starts
// none early. All push the same gradients, those of the works' records.
func TestEarlyMicroBatchIsTheNamedOne(t *testing.T) {
	path := writeShard(t, 12) // chunks of 4; record i has feature and label i
	chunk := func(c int32) []*api.Slice { return []*api.Slice{{File: path, Chunk: c, First: 0, Count: 4}} }
	run := func(id int, hints []int32) (*trainer, [][]float32) {
		var steps []*api.GetStepResponse
		for s := range 3 {
			w := ready(int64(s), 1)
			w.Slices, w.PullWithPush = chunk(int32(s)), true
			if s < 2 {
				w.NextSlices = chunk(hints[s])
			}
			steps = append(steps, w)
		}
		steps = append(steps, &api.GetStepResponse{Status: api.WorkStatus_WORK_DONE})
		m := &slowMaster{fakeMaster: &fakeMaster{steps: steps, answerNext: true}, delay: 30 * time.Millisecond,
			entered: make(chan struct{}, 1)}
		ps := &gradPservers{fakePservers: &fakePservers{pulls: []pullAnswer{{0, 0, nil}}, bring: true}, reported: m.entered}
		var out bytes.Buffer
		tr := fakeTrainer(t, nil, nil, &out)
		tr.master.client, tr.ps, tr.id = m, ps, id
		tr.spec = &jobspec.Spec{Seed: 1, Pservers: 1, Model: jobspec.ModelSpec{Kind: "linear", Inputs: 1, Outputs: 1}}
		var err error
		if tr.layout, err = client.NewLayout(tr.spec); err != nil {
			t.Fatal(err)
		}
		tr.params, tr.grads = tr.layout.NewParams(), tr.layout.NewParams()
		tr.data.open = os.Open
		if err := tr.runSync(context.Background(), 0); err != nil {
			t.Fatalf("runSync: %v\n%s", err, out.String())
		}
		if len(m.reports) != 3 {
			t.Fatalf("reports %v, want steps 0, 1 and 2\n%s", m.reports, out.String())
		}
		return tr, ps.grads
	}

	right, pushed := run(0, []int32{1, 2})
	if right.earlyTaken != 2 || right.earlyDropped != 0 {
		t.Fatalf("right hints: %d early micro-batches taken, %d dropped; want 2 and 0", right.earlyTaken, right.earlyDropped)
	}
	wrong, pushedWrong := run(0, []int32{2, 0})
	if wrong.earlyTaken != 0 || wrong.earlyDropped != 2 {
		t.Fatalf("wrong hints: %d early micro-batches taken, %d dropped; want 0 and 2", wrong.earlyTaken, wrong.earlyDropped)
	}
	other, pushedOther := run(1, []int32{1, 2})
	if other.earlyTaken != 0 || other.earlyDropped != 0 {
		t.Fatalf("another trainer's micro-batch: %d early micro-batches taken, %d dropped; want none", other.earlyTaken, other.earlyDropped)
	}
	if len(pushed) != 3 || !slices.EqualFunc(pushed, pushedWrong, slices.Equal) || !slices.EqualFunc(pushed, pushedOther, slices.Equal) {
		t.Fatalf("pushed gradients differ: right hints %v, wrong hints %v, trainer 1 %v", pushed, pushedWrong, pushedOther)
	}
	if slices.Equal(pushed[0], pushed[1]) || slices.Equal(pushed[1], pushed[2]) {
		t.Fatalf("the chunks' gradients are alike (%v): the test cannot tell them apart", pushed)
	}
}
