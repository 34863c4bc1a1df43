package daemon

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/gtrain/gtrain/api"
)

// collectLogs reads a Logs stream to its end (or until stop says so),
// checking that every chunk holds whole lines, and gives each worker's.
func collectLogs(t *testing.T, stream interface {
	Recv() (*api.LogChunk, error)
}, stop func(map[string]string) bool) (map[string]string, error) {
	t.Helper()
	var until func([]emitted) bool
	if stop != nil {
		until = func(c []emitted) bool { return stop(byWorker(c)) }
	}
	chunks, err := logChunks(t, stream, until)
	return byWorker(chunks), err
}

func TestLogs(t *testing.T) {
	t.Parallel()
	endpoint := startEtcd(t)
	cli := etcdClient(t, endpoint)
	cfg := testConfig(t, "n1", endpoint)
	a := startAgent(t, cfg)

	const done = "ok-logs"
	submit(t, a, done, 1, 1)
	allInState(t, cli, done, api.WorkerExited, "master", "pserver-0", "trainer-0")
	checkLogsOfEndedJob(t, a, done)
	checkLogsRefused(t, a, done)

	const running = "sleep-logs"
	submit(t, a, running, 1, 1)
	// Placed by the scheduler after the submit: until then a follow starts
	// with a notice (TestLogsFollowNodeThatJoins), not the log.
	allInState(t, cli, running, api.WorkerRunning, "master", "pserver-0", "trainer-0")
	checkFollowUntilCancelled(t, a, running)
	checkFollowUntilJobStops(t, a, running)
}

// streamLogs calls Logs and reads the stream to its end.
func streamLogs(t *testing.T, a *testAgent, req *api.LogsRequest) map[string]string {
	t.Helper()
	return byWorker(mustLogs(t, a, req))
}

// checkLogsOfEndedJob: every worker's whole log file, or its last lines.
func checkLogsOfEndedJob(t *testing.T, a *testAgent, job string) {
	t.Helper()
	all := streamLogs(t, a, &api.LogsRequest{Job: job})
	for _, w := range []string{"master", "pserver-0", "trainer-0"} {
		want := readLog(t, a.cfg, job, w)
		if all[w] != want || !strings.HasPrefix(want, "=== gtraind: starting "+w+" (attempt 1) at ") || !strings.HasSuffix(want, "done\n") {
			t.Errorf("log of %s = %q, want the file %q", w, all[w], want)
		}
	}
	last := streamLogs(t, a, &api.LogsRequest{Job: job, Worker: "trainer-0", Lines: 2})
	if len(last) != 1 || last["trainer-0"] != "working\ndone\n" {
		t.Errorf("-w trainer-0 -n 2 = %q, want the last two lines", last)
	}
}

func checkLogsRefused(t *testing.T, a *testAgent, job string) {
	t.Helper()
	for _, tc := range []struct {
		req      *api.LogsRequest
		code     codes.Code
		contains []string
	}{
		{&api.LogsRequest{Job: "nope"}, codes.NotFound, []string{"job nope not found"}},
		{&api.LogsRequest{Job: job, Worker: "trainer-7"}, codes.NotFound, []string{"no worker trainer-7", "master, pserver-0, trainer-0"}},
		{&api.LogsRequest{Job: job, Lines: -1}, codes.InvalidArgument, []string{"lines"}},
	} {
		stream, err := a.client.Logs(context.Background(), tc.req)
		if err == nil {
			_, err = collectLogs(t, stream, nil)
		}
		assertStatus(t, "logs "+tc.req.String(), err, tc.code, tc.contains...)
	}
}

// checkFollowUntilCancelled: following a running job streams new lines
// until the client cancels.
func checkFollowUntilCancelled(t *testing.T, a *testAgent, job string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := a.client.Logs(ctx, &api.LogsRequest{Job: job, Worker: "trainer-0", Follow: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := collectLogs(t, stream, func(got map[string]string) bool { return strings.Contains(got["trainer-0"], "tick 5\n") })
	if err != nil {
		t.Fatalf("follow: %v (got %q)", err, got)
	}
	if !strings.HasPrefix(got["trainer-0"], "=== gtraind: starting trainer-0") {
		t.Errorf("follow from the start = %q", got["trainer-0"])
	}
}

// checkFollowUntilJobStops: following a job that ends, the stream ends by
// itself once the processes are gone and the log is quiet.
func checkFollowUntilJobStops(t *testing.T, a *testAgent, job string) {
	t.Helper()
	ctx := context.Background()
	stream, err := a.client.Logs(ctx, &api.LogsRequest{Job: job, Follow: true, Lines: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.client.StopJob(ctx, &api.StopJobRequest{Name: job}); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	var tail map[string]string
	go func() {
		var err error
		tail, err = collectLogs(t, stream, nil)
		ended <- err
	}()
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("follow of a stopped job: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("follow did not end after the job stopped")
	}
	if !strings.HasSuffix(tail["master"], "got SIGTERM; bye\n") {
		t.Errorf("followed master log ends %q, want its goodbye", tail["master"])
	}
}
