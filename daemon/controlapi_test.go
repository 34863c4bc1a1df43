package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
)

// The Control API over real gRPC, on a --dev agent with its embedded etcd.
func TestControlAPI(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, "node-a", "")
	cfg.EtcdEndpoints = nil
	cfg.Dev = true
	cfg.EtcdClientAddr, cfg.EtcdPeerAddr = freeAddr(t), freeAddr(t)
	a := startAgent(t, cfg)
	dataDir := t.TempDir()
	train, test := writeShards(t, dataDir)

	checkRejectedSpecs(t, a, dataDir, train, test)
	const job = "sleep-api"
	wantWorkers := []string{"master", "pserver-0", "trainer-0", "trainer-1"}
	checkSubmit(t, a, job, train, test, wantWorkers)
	checkUnknownJob(t, a)
	checkNodeRoles(t, a, []string{"sleep-api/master", "sleep-api/pserver-0", "sleep-api/trainer-0", "sleep-api/trainer-1"})
	checkWorkersRunning(t, a, job, wantWorkers)
	checkJobStatus(t, a, job)
	checkJobList(t, a, job)
	checkStopPurge(t, a, job, wantWorkers)
}

// checkRejectedSpecs submits bad specs; each is refused naming its problem.
func checkRejectedSpecs(t *testing.T, a *testAgent, dataDir, train, test string) {
	t.Helper()
	rejected := []struct {
		name     string
		spec     []byte
		code     codes.Code
		contains []string
	}{
		{"negative trainers", specJSON(t, "bad", train, test, -1, 1, nil),
			codes.InvalidArgument, []string{"trainers", "at least 1"}},
		{"unknown field", specJSON(t, "bad", train, test, 1, 1, func(m map[string]any) { m["trainerz"] = 2 }),
			codes.InvalidArgument, []string{`unknown field "trainerz"`}},
		{"bad name", specJSON(t, "bad_name", train, test, 1, 1, nil),
			codes.InvalidArgument, []string{"name", "'_'"}},
		{"glob matches nothing", specJSON(t, "bad", filepath.Join(dataDir, "nothing-*"), test, 1, 1, nil),
			codes.InvalidArgument, []string{"data.train", "matched no file"}},
		{"relative data path", specJSON(t, "bad", "d-train-*", test, 1, 1, nil),
			codes.InvalidArgument, []string{"data.train", "absolute"}},
		{"inputs do not match the records", specJSON(t, "bad", train, test, 1, 1, func(m map[string]any) {
			m["model"].(map[string]any)["inputs"] = 5
		}), codes.InvalidArgument, []string{"model.inputs", "3 expected"}},
		{"not JSON", []byte("name: x"), codes.InvalidArgument, []string{"spec_json"}},
		{"parameters cannot fit the pserver's memory", specJSON(t, "bad", train, test, 1, 1, func(m map[string]any) {
			m["model"] = map[string]any{"kind": "mlp", "inputs": testFeatures, "outputs": 1, "hidden": []int{100000, 100000}}
			m["resources"] = map[string]any{"pserver": map[string]any{"cpu": 1, "memory": "512Mi"}}
		}), codes.InvalidArgument, []string{"resources.pserver.memory", "512Mi", "10000600001 parameters", "request at least 37.3Gi"}},
	}
	for _, tc := range rejected {
		_, err := a.client.SubmitJob(context.Background(), &api.SubmitJobRequest{SpecJson: tc.spec})
		assertStatus(t, tc.name, err, tc.code, tc.contains...)
	}
}

// checkSubmit submits job with 2 trainers and 1 pserver, then once more.
func checkSubmit(t *testing.T, a *testAgent, job, train, test string, wantWorkers []string) {
	t.Helper()
	ctx := context.Background()
	resp, err := a.client.SubmitJob(ctx, &api.SubmitJobRequest{SpecJson: specJSON(t, job, train, test, 2, 1, nil)})
	if err != nil {
		t.Fatalf("submit valid spec: %v", err)
	}
	if resp.Name != job || !slices.Equal(resp.Workers, wantWorkers) {
		t.Errorf("submit = %s %v, want %s %v", resp.Name, resp.Workers, job, wantWorkers)
	}
	_, err = a.client.SubmitJob(ctx, &api.SubmitJobRequest{SpecJson: specJSON(t, job, train, test, 1, 1, nil)})
	assertStatus(t, "duplicate", err, codes.AlreadyExists, "job "+job+" already exists", "gctl job stop "+job+" --purge")
	// The name is checked before any work (a program's declare runs the
	// submitted code): a duplicate whose data is wrong too is refused for
	// its name.
	nothing := filepath.Join(filepath.Dir(train), "nothing-*")
	_, err = a.client.SubmitJob(ctx, &api.SubmitJobRequest{SpecJson: specJSON(t, job, nothing, test, 1, 1, nil)})
	assertStatus(t, "duplicate with bad data", err, codes.AlreadyExists, "job "+job+" already exists")
}

func checkUnknownJob(t *testing.T, a *testAgent) {
	t.Helper()
	ctx := context.Background()
	_, err := a.client.GetJob(ctx, &api.GetJobRequest{Name: "nope"})
	assertStatus(t, "get unknown job", err, codes.NotFound, "job nope not found; see gctl job list")
	_, err = a.client.ListWorkers(ctx, &api.GetJobRequest{Name: "nope"})
	assertStatus(t, "workers of unknown job", err, codes.NotFound, "job nope not found")
	_, err = a.client.StopJob(ctx, &api.StopJobRequest{Name: "nope"})
	assertStatus(t, "stop unknown job", err, codes.NotFound, "job nope not found")
}

// checkNodeRoles lists the one node, ready, with wantRoles placed on it
// once the scheduler placed the job.
func checkNodeRoles(t *testing.T, a *testAgent, wantRoles []string) {
	t.Helper()
	eventually(t, 20*time.Second, func() (bool, string) {
		nodes := listNodes(t, a)
		if len(nodes) != 1 || nodes[0].Name != "node-a" || nodes[0].State != api.NodeReady || nodes[0].Addr != a.addr || nodes[0].CPU < 1 {
			t.Fatalf("nodes = %+v, want node-a ready at %s", nodes, a.addr)
		}
		return slices.Equal(nodes[0].Roles, wantRoles), fmt.Sprintf("roles = %v, want %v", nodes[0].Roles, wantRoles)
	})
}

func listNodes(t *testing.T, a *testAgent) []api.NodeRow {
	t.Helper()
	var nodes []api.NodeRow
	getDoc(t, "list nodes", func() (*api.Document, error) {
		return a.client.ListNodes(context.Background(), &api.ListNodesRequest{})
	}, &nodes)
	return nodes
}

// checkWorkersRunning waits until `job workers` shows every worker running
// on node-a, in spec order.
func checkWorkersRunning(t *testing.T, a *testAgent, job string, wantWorkers []string) {
	t.Helper()
	var rows []api.WorkerRow
	eventually(t, 20*time.Second, func() (bool, string) {
		getDoc(t, "list workers", func() (*api.Document, error) {
			return a.client.ListWorkers(context.Background(), &api.GetJobRequest{Name: job})
		}, &rows)
		for _, r := range rows {
			if r.State != api.WorkerRunning || r.PID == 0 || r.Node != "node-a" {
				return false, "workers not all running: " + mustJSON(rows)
			}
		}
		return len(rows) == 4, "workers: " + mustJSON(rows)
	})
	for i, r := range rows {
		if r.Name != wantWorkers[i] {
			t.Errorf("worker row %d = %s, want %s (spec order)", i, r.Name, wantWorkers[i])
		}
	}
}

// checkJobStatus reads `job status` of the running (PENDING) job.
func checkJobStatus(t *testing.T, a *testAgent, job string) {
	t.Helper()
	doc, err := a.client.GetJob(context.Background(), &api.GetJobRequest{Name: job})
	if err != nil {
		t.Fatal(err)
	}
	var st api.JobStatus
	getDoc(t, "get job", func() (*api.Document, error) { return doc, nil }, &st)
	if st.Name != job || st.State != api.StatePending || st.Mode != "sync" || st.Passes != 2 || st.Pass != 0 {
		t.Errorf("status = %+v", st)
	}
	if len(st.Trainers) != 2 || st.Trainers[1].Name != "trainer-1" || st.Trainers[1].ID != 1 || st.Trainers[1].PID == 0 {
		t.Errorf("trainers = %+v", st.Trainers)
	}
	if len(st.Pservers) != 1 || st.Pservers[0].Name != "pserver-0" || st.Pservers[0].State != api.WorkerRunning {
		t.Errorf("pservers = %+v", st.Pservers)
	}
	if st.Master.Name != "master" || st.Master.Node != "node-a" || st.Master.PID == 0 {
		t.Errorf("master = %+v", st.Master)
	}
	if len(st.Events) == 0 || st.Events[0].What != "job submitted by anonymous via node-a" {
		t.Errorf("events = %+v, want the submission first", st.Events)
	}
	// Arrays are never null: scripts index them.
	for _, want := range []string{`"samples_applied":[]`, `"trainers":[{`, `"pservers":[{`, `"events":[{`} {
		if !strings.Contains(string(doc.Json), want) {
			t.Errorf("status JSON lacks %s: %s", want, doc.Json)
		}
	}
}

func checkJobList(t *testing.T, a *testAgent, job string) {
	t.Helper()
	var jobs []api.JobRow
	getDoc(t, "list jobs", func() (*api.Document, error) {
		return a.client.ListJobs(context.Background(), &api.ListJobsRequest{})
	}, &jobs)
	if len(jobs) != 1 || jobs[0].Name != job || jobs[0].State != api.StatePending || jobs[0].Trainers != 2 ||
		jobs[0].Pservers != 1 || jobs[0].Passes != 2 || jobs[0].Loss != nil || !strings.HasSuffix(jobs[0].Age, "s") {
		t.Errorf("jobs = %+v", jobs)
	}
}

// checkStopPurge stops and purges job: it is gone, and so are its roles.
func checkStopPurge(t *testing.T, a *testAgent, job string, wantWorkers []string) {
	t.Helper()
	ctx := context.Background()
	stop, err := a.client.StopJob(ctx, &api.StopJobRequest{Name: job, Purge: true})
	if err != nil {
		t.Fatal(err)
	}
	if api.JobState(stop.State) != api.StateStopped || !slices.Equal(stop.Stopped, wantWorkers) {
		t.Errorf("stop --purge = %s %v, want STOPPED %v", stop.State, stop.Stopped, wantWorkers)
	}
	_, err = a.client.GetJob(ctx, &api.GetJobRequest{Name: job})
	assertStatus(t, "get purged job", err, codes.NotFound, "job "+job+" not found")
	if nodes := listNodes(t, a); len(nodes) != 1 || len(nodes[0].Roles) != 0 {
		t.Errorf("nodes after purge = %+v, want no roles", nodes)
	}
}

func assertStatus(t *testing.T, what string, err error, code codes.Code, contains ...string) {
	t.Helper()
	if status.Code(err) != code {
		t.Errorf("%s: error %v, want code %s", what, err, code)
		return
	}
	msg := status.Convert(err).Message()
	for _, c := range contains {
		if !strings.Contains(msg, c) {
			t.Errorf("%s: message %q lacks %q", what, msg, c)
		}
	}
}

func getDoc(t *testing.T, what string, call func() (*api.Document, error), v any) {
	t.Helper()
	doc, err := call()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := json.Unmarshal(doc.Json, v); err != nil {
		t.Fatalf("%s: decode %s: %v", what, doc.Json, err)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
