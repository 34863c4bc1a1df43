package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/internal/jobdir"
	"github.com/gtrain/gtrain/internal/testing/etcdtest"
	"github.com/gtrain/gtrain/internal/testing/logcheck"
	"github.com/gtrain/gtrain/internal/testing/wait"
)

// testFeatures is the feature count of the shards the tests write.
const testFeatures = 3

// freeAddr is a loopback address nobody listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	return lis.Addr().String()
}

// testLog discards unless GTRAIN_TEST_LOG is set, in which case the
// agent's log goes to stderr. Either way t fails if a line of the agent
// carries an attribute twice.
func testLog(t *testing.T) *slog.Logger {
	var h slog.Handler
	if os.Getenv("GTRAIN_TEST_LOG") != "" {
		h = slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})
	}
	return logcheck.Logger(t, h)
}

// startEtcd runs an embedded etcd for one test and returns its endpoint.
// The tests run agents in parallel, and an agent uses the fixed key layout
// and places workers on any node it sees, so each test needs its own member.
func startEtcd(t *testing.T) string {
	t.Helper()
	return etcdtest.Start(t).Endpoint
}

// etcdClient is the test's own view of the cluster's etcd.
func etcdClient(t *testing.T, endpoint string) *clientv3.Client {
	t.Helper()
	return etcdtest.Dial(t, endpoint)
}

// testConfig is an agent on loopback with free ports and quick timings.
func testConfig(t *testing.T, node, endpoint string) Config {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Config{
		DataDir:       t.TempDir(),
		NodeName:      node,
		APIAddr:       "127.0.0.1:0",
		GossipAddr:    "127.0.0.1:0",
		EtcdEndpoints: []string{endpoint},
		// Plaintext tests say so; TLS tests set TLS, which serves no
		// anonymous caller whatever Insecure says.
		Insecure:   true,
		SessionTTL: 2,
		StopGrace:  300 * time.Millisecond,
		Exe:        exe,
		Log:        testLog(t),
		// The tests' shards and checkpoint dirs are t.TempDir()s, and they
		// submit without a spec file: allow the temp dir (paths_test.go
		// narrows this).
		AllowedPaths: []string{os.TempDir()},
	}
}

// testAgent is a running Run.
type testAgent struct {
	cfg    Config
	addr   string
	client api.ControlClient
	cancel context.CancelFunc
	done   chan error
}

// startAgent runs the agent until the test ends (or stop is called).
func startAgent(t *testing.T, cfg Config) *testAgent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a := &testAgent{cfg: cfg, cancel: cancel, done: make(chan error, 1)}
	ready := make(chan string, 1)
	go func() { a.done <- Run(ctx, cfg, func(addr string) { ready <- addr }) }()
	select {
	case a.addr = <-ready:
	case err := <-a.done:
		cancel()
		t.Fatalf("agent %s did not start: %v", cfg.NodeName, err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatalf("agent %s not ready after 30s", cfg.NodeName)
	}
	conn, err := grpc.NewClient(a.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	a.client = api.NewControlClient(conn)
	t.Cleanup(func() {
		conn.Close()
		a.stop(t)
	})
	return a
}

// stop ends the agent and checks that it returned nil; it may be called
// more than once.
func (a *testAgent) stop(t *testing.T) {
	t.Helper()
	a.cancel()
	select {
	case err, ok := <-a.done:
		if ok && err != nil {
			t.Errorf("agent %s: Run returned %v", a.cfg.NodeName, err)
		}
		if ok {
			close(a.done)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("agent %s did not stop within 30s", a.cfg.NodeName)
	}
}

// writeShards writes a train and a test shard of testFeatures features
// under dir and returns their globs.
func writeShards(t *testing.T, dir string) (train, test string) {
	t.Helper()
	examples := []dataset.Example{
		{Features: []float32{1, 2, 3}, Label: 1},
		{Features: []float32{4, 5, 6}, Label: 2},
	}
	for _, part := range []string{dataset.PartTrain, dataset.PartTest} {
		meta := dataset.ShardMeta{Features: testFeatures, Part: part}
		path := filepath.Join(dir, fmt.Sprintf("d-%s-00000-of-00001", part))
		if err := dataset.WriteShard(path, meta, examples, 1); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "d-train-*"), filepath.Join(dir, "d-test-*")
}

// specJSON is a valid spec of a linear model over the test shards; edit
// changes the decoded map before it is encoded again.
func specJSON(t *testing.T, name, train, test string, trainers, pservers int, edit func(map[string]any)) []byte {
	t.Helper()
	spec := map[string]any{
		"name": name, "mode": "sync", "trainers": trainers, "pservers": pservers, "passes": 2, "batch_size": 2, "seed": 1,
		"model":      map[string]any{"kind": "linear", "inputs": testFeatures, "outputs": 1},
		"optimizer":  map[string]any{"kind": "sgd", "learning_rate": 0.01},
		"data":       map[string]any{"train": train, "test": test, "chunks_per_task": 1},
		"checkpoint": map[string]any{"every": "10s", "keep": 3},
		"restarts":   map[string]any{"limit": 10, "window": "1m"},
	}
	if edit != nil {
		edit(spec)
	}
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// submit submits a valid job to the agent.
func submit(t *testing.T, a *testAgent, name string, trainers, pservers int) {
	t.Helper()
	submitSpec(t, a, name, trainers, pservers, nil)
}

// submitSpec submits a valid job, changed by edit, to the agent.
func submitSpec(t *testing.T, a *testAgent, name string, trainers, pservers int, edit func(map[string]any)) {
	t.Helper()
	train, test := writeShards(t, t.TempDir())
	if _, err := a.client.SubmitJob(context.Background(), &api.SubmitJobRequest{
		SpecJson: specJSON(t, name, train, test, trainers, pservers, edit),
	}); err != nil {
		t.Fatalf("submit %s: %v", name, err)
	}
}

// withCheckpointDir gives the spec a checkpoint.dir, which lets its workers
// spread over nodes (on loopback every agent shares the file system).
func withCheckpointDir(dir string) func(map[string]any) {
	return func(m map[string]any) {
		m["checkpoint"] = map[string]any{"every": "10s", "keep": 3, "dir": dir}
	}
}

// eventually is wait.Eventually for the callers here, whose cond's
// description says what it awaits.
func eventually(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	wait.Eventually(t, timeout, "the condition", cond)
}

// workers reads the job's WorkerRecords.
func workers(t *testing.T, cli *clientv3.Client, job string) map[string]schema.WorkerRecord {
	t.Helper()
	recs, err := coord.ListJSON[schema.WorkerRecord](context.Background(), cli, coord.WorkerPrefix(job))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]schema.WorkerRecord{}
	for _, r := range recs {
		out[r.Name] = r
	}
	return out
}

// allInState waits until every named worker has a record in state.
func allInState(t *testing.T, cli *clientv3.Client, job string, state api.WorkerState, names ...string) map[string]schema.WorkerRecord {
	t.Helper()
	var recs map[string]schema.WorkerRecord
	eventually(t, 20*time.Second, func() (bool, string) {
		recs = workers(t, cli, job)
		for _, n := range names {
			if recs[n].State != state {
				return false, fmt.Sprintf("job %s: want %v %s, records %+v", job, names, state, recs)
			}
		}
		return true, ""
	})
	return recs
}

// events are the What of the job's events.
func events(t *testing.T, cli *clientv3.Client, job string) []string {
	t.Helper()
	evs, err := coord.ListJSON[api.Event](context.Background(), cli, coord.EventPrefix(job))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.What
	}
	return out
}

func readLog(t *testing.T, cfg Config, job, worker string) string {
	t.Helper()
	b, err := os.ReadFile(jobdir.WorkerLog(cfg.DataDir, job, worker))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func countOf(s, sub string) int { return strings.Count(s, sub) }
