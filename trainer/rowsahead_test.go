package trainer

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/metrics"
	"github.com/gtrain/gtrain/model"
	"github.com/gtrain/gtrain/pserver/client"
)

// rowPservers is a gradPservers that also serves embedding rows: a row's
// values are those of the step the pull asks for (rowValue), so a
// gradient computed from another step's rows differs. It keeps every rows
// push's gradients and the step each pull asked for.
type rowPservers struct {
	*gradPservers
	rowGrads  [][]float32 // each push's, flattened over its fields
	rowSteps  []int64     // each pull's min step
	rowPushed []int64     // each push's step
	rowFaults
}

// rowFaults are changes to the pservers' answers, at the pull of that
// number (1: the first; 0: none): a re-shard committed after it (the
// layout generation moves on), or a pull that fails once it filled its
// first field.
type rowFaults struct{ newLayoutAfter, failAt int }

func rowValue(step int64, id uint64, k int) float32 {
	return 0.1*float32(step+1) + 0.01*float32(id) + 0.001*float32(k)
}

func (p *rowPservers) PullBatchRows(_ context.Context, tables []model.RecTable, b *model.RecBatch, minStep, _ int64) error {
	p.rowSteps = append(p.rowSteps, minStep)
	n := len(p.rowSteps)
	if n == p.newLayoutAfter {
		p.gen++
	}
	for i := range b.Fields {
		if i == 1 && n == p.failAt {
			return status.Error(codes.Unavailable, "pserver 1 is gone")
		}
		f := &b.Fields[i]
		f.SizeRows(tables[i].Dim)
		for u, id := range f.IDs {
			for k := range tables[i].Dim {
				f.Rows[u*tables[i].Dim+k] = rowValue(minStep, id, k)
			}
		}
	}
	return nil
}

func (p *rowPservers) PushBatchRows(_ context.Context, _ int, step, _, _ int64, _ []model.RecTable, _ *model.RecBatch, rows [][]float32) error {
	p.rowPushed = append(p.rowPushed, step)
	p.rowGrads = append(p.rowGrads, slices.Concat(rows...))
	return nil
}

// PushPull keeps the rows a sync push carries (client.Rows) as
// PushBatchRows keeps those pushed on their own.
func (p *rowPservers) PushPull(ctx context.Context, mb int, step, epoch, records int64, ckpt bool, grads, params [][]float32, accepted func(), opts ...client.PushOption) (client.Pulled, error) {
	if tables, b, rows := client.RowsIn(opts); rows != nil {
		if err := p.PushBatchRows(ctx, mb, step, epoch, records, tables, b, rows); err != nil {
			return client.Pulled{}, err
		}
	}
	return p.gradPservers.PushPull(ctx, mb, step, epoch, records, ckpt, grads, params, accepted, opts...)
}

// writeRecShard writes n records of one feature and two id fields, in
// chunks of 4: record i has feature i, label i, user i%5 and item 10+i%3.
func writeRecShard(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r-train-00000-of-00001")
	var ex []dataset.Example
	for i := range n {
		ex = append(ex, dataset.Example{Features: []float32{float32(i)}, Label: float32(i),
			IDs: [][]uint64{{uint64(i % 5)}, {uint64(10 + i%3)}}})
	}
	meta := dataset.ShardMeta{Features: 1, Part: "train", IDFields: []dataset.IDField{{Name: "user"}, {Name: "item"}}}
	if err := dataset.WriteShard(path, meta, ex, 4); err != nil {
		t.Fatal(err)
	}
	return path
}

// runRowsAhead trains 3 steps of chunks 0, 1 and 2 of path as the
// recommender, with the master's script changed as c says, and returns
// the row pulls by when (gtrain_trainer_row_pulls_total) and the pservers.
func runRowsAhead(t *testing.T, path string, c earlyChange, f rowFaults) (map[string]float64, *rowPservers) {
	t.Helper()
	m, pulls := earlyScript(path, c)
	ps := &rowPservers{gradPservers: &gradPservers{fakePservers: &fakePservers{pulls: pulls, bring: !c.noParamsBack}, reported: m.entered},
		rowFaults: f}
	var out bytes.Buffer
	tr := fakeTrainer(t, nil, nil, &out)
	tr.master.client, tr.ps, tr.id = m, ps, c.id
	tr.spec = &jobspec.Spec{Seed: 1, Pservers: 1, Model: jobspec.ModelSpec{Kind: jobspec.KindRecommender, Fields: []string{"user", "item"},
		Dim: 2, Inputs: 1, Hidden: []int{4}, Outputs: 1}}
	var err error
	if tr.layout, err = client.NewLayout(tr.spec); err != nil {
		t.Fatal(err)
	}
	tr.params, tr.grads, tr.rec = tr.layout.NewParams(), tr.layout.NewParams(), newRecState(tr.layout)
	reg := prometheus.NewRegistry()
	tr.metrics = metrics.NewTrainer(reg)
	tr.data.open = os.Open
	if err := tr.runSync(context.Background(), 0); err != nil {
		t.Fatalf("%+v: runSync: %v\n%s", c, err, out.String())
	}
	if len(m.reports) != 3 || len(ps.pulls) != 0 {
		t.Fatalf("%+v: reports %v, want steps 0, 1 and 2; pulls left %v\n%s", c, m.reports, ps.pulls, out.String())
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	byWhen := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() == "gtrain_trainer_row_pulls_total" {
			for _, m := range mf.GetMetric() {
				byWhen[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
			}
		}
	}
	return byWhen, ps
}

// TestRowsPulledAheadAreTheNamedOnes: with the step reports slower than
// the pushes, a recommender's trainer pulls the rows of the records the
// master's hint names while the report's answer is awaited, and uses them
// once that answer names the same work, of the step whose parameters the
// push brought back. An answer naming other records (a wrong hint) or
// another epoch, or under another layout, drops them and pulls again, as
// does a pull ahead that failed part-way; a push that brought no
// parameters back, or of another trainer's micro-batch, pulls none ahead. All push the same row gradients and
// pull each step's rows as of that step: the rows of the works' records
// at their steps.
func TestRowsPulledAheadAreTheNamedOnes(t *testing.T) {
	path := writeRecShard(t, 12)
	type want struct{ inStep, ahead, unused float64 }
	right, ps := runRowsAhead(t, path, earlyChange{hints: []int32{1, 2}}, rowFaults{})
	if w := (want{right[metrics.RowsInStep], right[metrics.RowsAhead], right[metrics.RowsAheadUnused]}); w != (want{1, 2, 0}) {
		t.Fatalf("right hints: row pulls in step, ahead and ahead unused %+v, want {1 2 0}", w)
	}
	if !slices.Equal(ps.rowSteps, []int64{0, 1, 2}) || !slices.Equal(ps.rowPushed, []int64{0, 1, 2}) {
		t.Fatalf("right hints: rows pulled as of steps %v and pushed for %v, want 0, 1, 2 each", ps.rowSteps, ps.rowPushed)
	}
	pushed := ps.rowGrads
	if len(pushed) != 3 || slices.Equal(pushed[0], pushed[1]) || slices.Equal(pushed[1], pushed[2]) {
		t.Fatalf("the steps' row gradients are alike (%v): the test cannot tell them apart", pushed)
	}
	for _, c := range []struct {
		what   string
		change earlyChange
		want   want
		steps  []int64 // the min steps of the row pulls
		faults rowFaults
	}{
		{"wrong hints", earlyChange{hints: []int32{2, 0}}, want{3, 0, 2}, []int64{0, 1, 1, 2, 2}, rowFaults{}},
		{"step 1 in a new epoch", earlyChange{hints: []int32{1, 2}, epoch1: 2}, want{2, 1, 1}, []int64{0, 1, 1, 2}, rowFaults{}},
		{"no parameters brought back", earlyChange{hints: []int32{1, 2}, noParamsBack: true}, want{3, 0, 0}, []int64{0, 1, 2}, rowFaults{}},
		{"another trainer's micro-batch", earlyChange{id: 1, hints: []int32{1, 2}}, want{3, 0, 0}, []int64{0, 1, 2}, rowFaults{}},
		{"a new layout after the first pull ahead", earlyChange{hints: []int32{1, 2}}, want{2, 1, 1}, []int64{0, 1, 1, 2}, rowFaults{newLayoutAfter: 2}},
		{"the first pull ahead failed", earlyChange{hints: []int32{1, 2}}, want{2, 1, 0}, []int64{0, 1, 1, 2}, rowFaults{failAt: 2}},
	} {
		got, ps := runRowsAhead(t, path, c.change, c.faults)
		if w := (want{got[metrics.RowsInStep], got[metrics.RowsAhead], got[metrics.RowsAheadUnused]}); w != c.want {
			t.Errorf("%s: row pulls in step, ahead and ahead unused %+v, want %+v", c.what, w, c.want)
		}
		if !slices.Equal(ps.rowSteps, c.steps) {
			t.Errorf("%s: rows pulled as of steps %v, want %v", c.what, ps.rowSteps, c.steps)
		}
		if !slices.EqualFunc(pushed, ps.rowGrads, slices.Equal) {
			t.Errorf("%s: pushed row gradients %v, want %v", c.what, ps.rowGrads, pushed)
		}
	}
}
