package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
)

var testNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// testRun is one gctl invocation's outcome.
type testRun struct {
	code           int
	stdout, stderr string
}

// newTestApp is an app with captured output, a fixed clock, UTC times, no
// waiting between polls and a home without a config file. The GCTL_*
// variables are cleared for the test.
func newTestApp(t *testing.T) (*app, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	for _, env := range []string{envAddr, envConfig, envContext} {
		t.Setenv(env, "")
	}
	var stdout, stderr bytes.Buffer
	a := newApp(&stdout, &stderr)
	a.loc = time.UTC
	a.now = func() time.Time { return testNow }
	a.home = t.TempDir()
	a.wait = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	return a, &stdout, &stderr
}

func runGctl(t *testing.T, a *app, stdout, stderr *bytes.Buffer, args ...string) testRun {
	t.Helper()
	code := run(context.Background(), a, args)
	return testRun{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// fakeAgent is a Control server whose answers the test sets.
type fakeAgent struct {
	api.UnimplementedControlServer

	mu        sync.Mutex
	jobs      []api.JobRow
	workers   []api.WorkerRow
	nodes     []api.NodeRow
	statuses  []api.JobStatus // GetJob answers in turn; the last one repeats
	getCalls  int
	getErr    error
	submitErr error
	submitted []byte
	stopReq   *api.StopJobRequest
	scaleReq  *api.ScaleJobRequest
	logReq    *api.LogsRequest
	logs      []*api.LogChunk
}

func (f *fakeAgent) SubmitJob(_ context.Context, req *api.SubmitJobRequest) (*api.SubmitJobResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.submitErr != nil {
		return nil, f.submitErr
	}
	f.submitted = req.GetSpecJson()
	var spec struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(req.GetSpecJson(), &spec); err != nil {
		return nil, err
	}
	return &api.SubmitJobResponse{Name: spec.Name, Workers: []string{"master", "pserver-0", "trainer-0"}}, nil
}

func (f *fakeAgent) ListJobs(context.Context, *api.ListJobsRequest) (*api.Document, error) {
	return document(f.jobs)
}

func (f *fakeAgent) ListWorkers(context.Context, *api.GetJobRequest) (*api.Document, error) {
	return document(f.workers)
}

func (f *fakeAgent) ListNodes(context.Context, *api.ListNodesRequest) (*api.Document, error) {
	return document(f.nodes)
}

// DrainNode and UndrainNode answer the node's row with the new state, or
// NotFound for a node not in f.nodes.
func (f *fakeAgent) DrainNode(_ context.Context, req *api.NodeRequest) (*api.Document, error) {
	return f.setNodeState(req.GetName(), api.NodeDraining)
}

func (f *fakeAgent) UndrainNode(_ context.Context, req *api.NodeRequest) (*api.Document, error) {
	return f.setNodeState(req.GetName(), api.NodeReady)
}

func (f *fakeAgent) setNodeState(name string, state api.NodeState) (*api.Document, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.nodes {
		if f.nodes[i].Name == name {
			f.nodes[i].State = state
			return document(f.nodes[i])
		}
	}
	return nil, status.Errorf(codes.NotFound, "node %s not found; see gctl node list", name)
}

func (f *fakeAgent) GetJob(context.Context, *api.GetJobRequest) (*api.Document, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.getErr != nil {
		return nil, f.getErr
	}
	i := min(f.getCalls, len(f.statuses)-1)
	f.getCalls++
	return document(f.statuses[i])
}

func (f *fakeAgent) StopJob(_ context.Context, req *api.StopJobRequest) (*api.StopJobResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopReq = req
	return &api.StopJobResponse{State: string(api.StateStopped), Stopped: []string{"trainer-0", "pserver-0", "master"}}, nil
}

// ScaleJob answers as an agent over a job of 1 trainer within [1, 8].
func (f *fakeAgent) ScaleJob(_ context.Context, req *api.ScaleJobRequest) (*api.ScaleJobResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scaleReq = req
	if req.GetTrainers() > 8 {
		return nil, status.Errorf(codes.InvalidArgument, "--trainers %d is outside job %s's bounds [min 1, max 8]", req.GetTrainers(), req.GetName())
	}
	return &api.ScaleJobResponse{Trainers: req.GetTrainers(), PreviousTrainers: 1, TrainersMin: 1, TrainersMax: 8, Pservers: 1}, nil
}

func (f *fakeAgent) Logs(req *api.LogsRequest, stream grpc.ServerStreamingServer[api.LogChunk]) error {
	f.mu.Lock()
	f.logReq = req
	chunks := f.logs
	f.mu.Unlock()
	for _, c := range chunks {
		if err := stream.Send(c); err != nil {
			return err
		}
	}
	return nil
}

func document(v any) (*api.Document, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &api.Document{Json: data}, nil
}

// startAgent serves f on a loopback port for the test and returns its address.
func startAgent(t *testing.T, f api.ControlServer) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	api.RegisterControlServer(srv, f)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// closedAddr is a loopback address where nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	if err := lis.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func ptr(v float64) *float64 { return &v }
