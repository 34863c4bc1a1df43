package daemon

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
)

// TestScaleJob: scaling within the bounds starts and stops trainer
// processes (the highest names go; the others keep running, same PID) and
// records an event; out of bounds, a pserver change and an unknown job are
// rejected as bad input.
func TestScaleJob(t *testing.T) {
	t.Parallel()
	endpoint := startEtcd(t)
	cli := etcdClient(t, endpoint)
	a := startAgent(t, testConfig(t, "n1", endpoint))
	const job = "sleep-scale"
	submitSpec(t, a, job, 1, 1, func(m map[string]any) { m["trainers_min"], m["trainers_max"] = 1, 3 })
	first := allInState(t, cli, job, api.WorkerRunning, "trainer-0")["trainer-0"].PID
	ctx := context.Background()
	scale := func(n int32) (*api.ScaleJobResponse, error) {
		return a.client.ScaleJob(ctx, &api.ScaleJobRequest{Name: job, Trainers: &n})
	}
	resp, err := scale(3)
	if err != nil || resp.Trainers != 3 || resp.PreviousTrainers != 1 || resp.TrainersMin != 1 || resp.TrainersMax != 3 {
		t.Fatalf("scale to 3 = %v, %v", resp, err)
	}
	allInState(t, cli, job, api.WorkerRunning, "trainer-0", "trainer-1", "trainer-2")
	if _, err := scale(1); err != nil {
		t.Fatal(err)
	}
	allInState(t, cli, job, api.WorkerStopped, "trainer-1", "trainer-2")
	if pid := allInState(t, cli, job, api.WorkerRunning, "trainer-0")["trainer-0"].PID; pid != first {
		t.Fatalf("trainer-0 restarted (pid %d, was %d): survivors must not restart", pid, first)
	}
	for _, tc := range []struct {
		req  *api.ScaleJobRequest
		code codes.Code
		want string
	}{
		{&api.ScaleJobRequest{Name: job, Trainers: ptr32(4)}, codes.InvalidArgument, "bounds [min 1, max 3]"},
		{&api.ScaleJobRequest{Name: job, Pservers: ptr32(2)}, codes.InvalidArgument, "outside job sleep-scale's bounds [min 1, max 1] (pservers:"},
		{&api.ScaleJobRequest{Name: "nope", Trainers: ptr32(2)}, codes.NotFound, "nope"},
	} {
		_, err := a.client.ScaleJob(ctx, tc.req)
		if status.Code(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ScaleJob(%v) = %v, want %s naming %q", tc.req, err, tc.code, tc.want)
		}
	}
	events, err := coord.ListJSON[api.Event](ctx, cli, coord.EventPrefix(job))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range events {
		if strings.Contains(e.What, "trainers scaled") {
			got = append(got, e.What)
		}
	}
	if len(got) != 2 || !strings.HasPrefix(got[0], "trainers scaled from 1 to 3") || !strings.HasPrefix(got[1], "trainers scaled from 3 to 1") {
		t.Fatalf("scaling events %q, want 1 -> 3 and 3 -> 1", got)
	}
}

func ptr32(v int32) *int32 { return &v }
