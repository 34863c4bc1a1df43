package e2e

import (
	"fmt"

	"context"
	"math"
	"testing"
	"time"

	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/testing/wait"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/internal/testing/etcdtest"
	"github.com/gtrain/gtrain/jobspec"
	clientv3 "go.etcd.io/etcd/client/v3"
	"gonum.org/v1/gonum/mat"
)

// startEtcd starts a real embedded etcd of the test's own: roles of a
// failed test may outlive it, and must not disturb the next one.
func startEtcd(t testing.TB) *clientv3.Client {
	t.Helper()
	return etcdtest.Dial(t, etcdtest.Start(t).Endpoint)
}

// fitALine is the fit-a-line spec over the shards in dir, as the agent
// reads it.
func fitALine(t testing.TB, name string, mode jobspec.Mode, dir string, passes int) jobspec.Spec {
	return parsed(t, fitALineJob(name, mode, passes, dir))
}

// leastSquaresTestMSE is the test MSE of the exact least-squares fit of the
// training part: the optimum a linear model can reach on this split.
func leastSquaresTestMSE(t testing.TB, res *dataset.ConvertResult) float64 {
	t.Helper()
	train, err := dataset.ReadAll(res.TrainFiles)
	if err != nil {
		t.Fatal(err)
	}
	test, err := dataset.ReadAll(res.TestFiles)
	if err != nil {
		t.Fatal(err)
	}
	f := len(train[0].Features)
	x := mat.NewDense(len(train), f+1, nil)
	y := mat.NewVecDense(len(train), nil)
	for i, e := range train {
		for j, v := range e.Features {
			x.Set(i, j, float64(v))
		}
		x.Set(i, f, 1)
		y.SetVec(i, float64(e.Label))
	}
	var w mat.VecDense
	if err := w.SolveVec(x, y); err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, e := range test {
		pred := w.AtVec(f)
		for j, v := range e.Features {
			pred += w.AtVec(j) * float64(v)
		}
		d := float64(e.Label) - pred
		sum += d * d
	}
	return sum / float64(len(test))
}

// submit writes a job record and its PENDING state, as the agent's API does.
func submit(t testing.TB, cli *clientv3.Client, spec jobspec.Spec) {
	t.Helper()
	ctx := context.Background()
	if err := coord.PutJSON(ctx, cli, coord.JobKey(spec.Name), schema.JobRecord{Spec: spec, Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := coord.PutJSON(ctx, cli, coord.StateKey(spec.Name), schema.StateRecord{State: api.StatePending}); err != nil {
		t.Fatal(err)
	}
}

func waitState(t testing.TB, cli *clientv3.Client, job string, timeout time.Duration) schema.StateRecord {
	t.Helper()
	var st schema.StateRecord
	wait.Eventually(t, timeout, "job "+job+" to finish", func() (bool, string) {
		var err error
		st, err = coord.JobState(context.Background(), cli, job)
		return err == nil && api.Terminal(st.State), fmt.Sprintf("%+v, %v", st, err)
	})
	return st
}

func progress(t testing.TB, cli *clientv3.Client, job string) schema.ProgressRecord {
	t.Helper()
	var p schema.ProgressRecord
	if _, err := coord.GetJSON(context.Background(), cli, coord.ProgressKey(job), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func within(got, want, frac float64) bool { return math.Abs(got-want) <= frac*want }
