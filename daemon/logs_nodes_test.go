package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/daemon/controlapi"
	"github.com/gtrain/gtrain/jobspec"
)

// writePlacedJob writes a valid job with an explicit placement, as the
// scheduler would, so that the test decides which node runs which worker. The
// job's checkpoint.dir is shared by the test's nodes, so the scheduler keeps a
// placement that spans them (after its storage check). edits change the
// spec after that.
func writePlacedJob(t *testing.T, cli *clientv3.Client, name string, trainers, pservers int, placement map[string]string,
	edits ...func(map[string]any)) {
	t.Helper()
	writePlacement(t, cli, name, trainers, pservers, placement, nil, edits...)
}

// writePlacement is writePlacedJob with the nodes that verified the shared
// checkpoint.dir already (the scheduler checks the others first).
func writePlacement(t *testing.T, cli *clientv3.Client, name string, trainers, pservers int, placement map[string]string,
	verified []string, edits ...func(map[string]any)) {
	t.Helper()
	train, test := writeShards(t, t.TempDir())
	shared := t.TempDir()
	var spec jobspec.Spec
	err := json.Unmarshal(specJSON(t, name, train, test, trainers, pservers, func(m map[string]any) {
		m["checkpoint"].(map[string]any)["dir"] = shared
		for _, edit := range edits {
			edit(m)
		}
	}), &spec)
	if err != nil {
		t.Fatal(err)
	}
	spec.ApplyDefaults()
	spec.FixGlobalBatch()
	assigned := schema.PlacementRecord{Gen: 1, Workers: map[string]schema.Assignment{}, Verified: verified}
	for w, n := range placement {
		assigned.Workers[w] = schema.Assignment{Node: n, Gen: 1}
	}
	now := time.Now().UTC()
	_, err = cli.Txn(context.Background()).Then(
		clientv3.OpPut(coord.JobKey(name), coord.MustJSON(schema.JobRecord{Spec: spec, Created: now})),
		clientv3.OpPut(coord.PlacementKey(name), coord.MustJSON(assigned)),
		clientv3.OpPut(coord.StateKey(name), coord.MustJSON(schema.StateRecord{State: api.StatePending, Updated: now})),
	).Commit()
	if err != nil {
		t.Fatal(err)
	}
}

// emitted is one chunk of a Logs stream.
type emitted struct {
	worker, data string
}

// logChunks reads a Logs stream until it ends or stop says so, keeping the
// chunks in the order they came.
func logChunks(t *testing.T, stream interface {
	Recv() (*api.LogChunk, error)
}, stop func([]emitted) bool) ([]emitted, error) {
	t.Helper()
	var got []emitted
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		if d := chunk.GetData(); len(d) == 0 || d[len(d)-1] != '\n' || chunk.GetCaughtUp() {
			t.Errorf("chunk %v is not whole lines of a worker", chunk)
		}
		got = append(got, emitted{chunk.GetWorker(), string(chunk.GetData())})
		if stop != nil && stop(got) {
			return got, nil
		}
	}
}

func byWorker(chunks []emitted) map[string]string {
	out := map[string]string{}
	for _, c := range chunks {
		out[c.worker] += c.data
	}
	return out
}

// checkTimeOrder: every line that carries a time comes no earlier than the
// timed lines before it, whichever worker and node they are from.
func checkTimeOrder(t *testing.T, what string, chunks []emitted) {
	t.Helper()
	var last time.Time
	var lastLine string
	for _, c := range chunks {
		for line := range strings.Lines(c.data) {
			at, ok := controlapi.LineTime([]byte(line))
			if !ok {
				continue
			}
			if at.Before(last) {
				t.Errorf("%s: %s | %q comes after the later %q", what, c.worker, line, lastLine)
			}
			last, lastLine = at, line
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	lines = lines[:len(lines)-1] // after the final newline
	return strings.Join(lines[max(0, len(lines)-n):], "")
}

// Two agents on one etcd, a job with workers on each: any agent serves
// every worker's log, merged by time, with -n and -f.
func TestLogsFromAnyNode(t *testing.T) {
	t.Parallel()
	endpoint := startEtcd(t)
	cli := etcdClient(t, endpoint)
	a := startAgent(t, testConfig(t, "n1", endpoint))
	b := startAgent(t, testConfig(t, "n2", endpoint))
	const job = "slog-anywhere"
	placement := map[string]string{"master": "n1", "trainer-0": "n1", "pserver-0": "n2", "trainer-1": "n2"}
	writePlacedJob(t, cli, job, 2, 1, placement)
	allInState(t, cli, job, api.WorkerRunning, "master", "pserver-0", "trainer-0", "trainer-1")

	checkFollowAcrossNodes(t, b, job)
	ending := startFollow(t, a, &api.LogsRequest{Job: job, Follow: true, Lines: 1})
	if _, err := a.client.StopJob(context.Background(), &api.StopJobRequest{Name: job}); err != nil {
		t.Fatal(err)
	}
	tail := ending.wait(t, 20*time.Second)
	for w := range placement {
		if lastLines(byWorker(tail)[w], 1) == "" || !strings.Contains(lastLines(byWorker(tail)[w], 1), `msg="got SIGTERM; bye"`) {
			t.Errorf("follow through n1 of a stopped job: %s ends %q, want its goodbye", w, byWorker(tail)[w])
		}
	}
	allInState(t, cli, job, api.WorkerStopped, "master", "pserver-0", "trainer-0", "trainer-1")

	files := map[string]string{}
	for w, node := range placement {
		files[w] = readLog(t, map[string]*testAgent{"n1": a, "n2": b}[node].cfg, job, w)
	}
	for _, via := range []*testAgent{a, b} {
		what := "logs through " + via.cfg.NodeName
		chunks := mustLogs(t, via, &api.LogsRequest{Job: job})
		checkTimeOrder(t, what, chunks)
		if got := byWorker(chunks); fmt.Sprint(got) != fmt.Sprint(files) {
			t.Errorf("%s: the workers' lines differ from their files:\n%q\nwant\n%q", what, got, files)
		}
		last := byWorker(mustLogs(t, via, &api.LogsRequest{Job: job, Lines: 3}))
		for w, f := range files {
			if last[w] != lastLines(f, 3) {
				t.Errorf("%s -n 3: %s = %q, want %q", what, w, last[w], lastLines(f, 3))
			}
		}
	}
	checkNodeGone(t, cli, a, b, job)
}

// checkFollowAcrossNodes: -f through one agent streams the new lines of
// the workers of both nodes, and -w of a worker on the other node.
func checkFollowAcrossNodes(t *testing.T, via *testAgent, job string) {
	t.Helper()
	enough := func(min int, workers ...string) func([]emitted) bool {
		return func(got []emitted) bool {
			for _, w := range workers {
				if strings.Count(byWorker(got)[w], "msg=tick") < min {
					return false
				}
			}
			return true
		}
	}
	all := []string{"master", "trainer-0", "pserver-0", "trainer-1"}
	f := startFollow(t, via, &api.LogsRequest{Job: job, Follow: true}, enough(10, all...))
	got := byWorker(f.wait(t, 20*time.Second))
	for _, w := range all {
		if !strings.HasPrefix(got[w], "=== gtraind: starting "+w) {
			t.Errorf("followed log of %s through %s starts %q, want from its beginning", w, via.cfg.NodeName, got[w])
		}
	}
	one := startFollow(t, via, &api.LogsRequest{Job: job, Worker: "trainer-0", Follow: true, Lines: 2}, enough(5, "trainer-0"))
	chunks := one.wait(t, 20*time.Second)
	if got := byWorker(chunks); len(got) != 1 || strings.Contains(got["trainer-0"], "=== gtraind: starting") {
		t.Errorf("-w trainer-0 -n 2 -f through %s: %q, want trainer-0's lines from its last two on", via.cfg.NodeName, got)
	}
}

// checkNodeGone: with n2's agent gone, n1's agent still shows the logs it
// keeps and says, for each worker whose log n2 keeps, that n2 is gone; a
// node down, or an agent that does not answer, is named the same way.
func checkNodeGone(t *testing.T, cli *clientv3.Client, a, b *testAgent, job string) {
	t.Helper()
	b.stop(t)
	ctx := context.Background()
	put := func(key string, v any) {
		if err := coord.PutJSON(ctx, cli, key, v); err != nil {
			t.Fatal(err)
		}
	}
	checkGoneNotices(t, a, job, map[string]string{
		"pserver-0": "the log of pserver-0 is kept on node n2, whose agent is not registered",
		"trainer-1": "the log of trainer-1 is kept on node n2, whose agent is not registered",
	})
	put(coord.NodeKey("n2"), schema.NodeRecord{Name: "n2", APIAddr: b.addr, State: api.NodeDown})
	// trainer-1 moved to n3, whose agent is registered but does not answer.
	put(coord.NodeKey("n3"), schema.NodeRecord{Name: "n3", APIAddr: freeAddr(t), State: api.NodeReady})
	put(coord.WorkerKey(job, "trainer-1"), schema.WorkerRecord{Name: "trainer-1", Node: "n3", State: api.WorkerStopped})
	checkGoneNotices(t, a, job, map[string]string{
		"pserver-0": "the log of pserver-0 is kept on node n2, which is down",
		"trainer-1": "cannot fetch the log of trainer-1 kept on node n3 (agent 127.0.0.1:",
	})
	stream, err := a.client.Logs(ctx, &api.LogsRequest{Job: job, Worker: "pserver-0"})
	if err == nil {
		_, err = logChunks(t, stream, nil)
	}
	assertStatus(t, "-w pserver-0 kept on the down n2", err, codes.Unavailable, "pserver-0", "node n2, which is down")
}

// checkGoneNotices: the logs of n1's workers in full, a notice for each
// worker whose log cannot be fetched.
func checkGoneNotices(t *testing.T, a *testAgent, job string, notices map[string]string) {
	t.Helper()
	got := byWorker(mustLogs(t, a, &api.LogsRequest{Job: job}))
	for w, want := range notices {
		if !strings.HasPrefix(got[w], "=== gtraind: ") || !strings.Contains(got[w], want) {
			t.Errorf("log of %s, kept on a node that is gone = %q, want a notice with %q", w, got[w], want)
		}
	}
	for _, w := range []string{"master", "trainer-0"} {
		if want := readLog(t, a.cfg, job, w); got[w] != want {
			t.Errorf("log of %s, kept on n1 = %q, want its file", w, got[w])
		}
	}
}

func mustLogs(t *testing.T, via *testAgent, req *api.LogsRequest) []emitted {
	t.Helper()
	stream, err := via.client.Logs(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := logChunks(t, stream, nil)
	if err != nil {
		t.Fatalf("logs %v through %s: %v", req, via.cfg.NodeName, err)
	}
	return chunks
}

// follow is a Logs stream read in the background.
type follow struct {
	cancel context.CancelFunc
	done   chan error
	first  chan struct{} // closed once the first chunk came
	chunks []emitted
}

// startFollow reads a Logs stream until it ends or stop says so.
func startFollow(t *testing.T, via *testAgent, req *api.LogsRequest, stop ...func([]emitted) bool) *follow {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stream, err := via.client.Logs(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	f := &follow{cancel: cancel, done: make(chan error, 1), first: make(chan struct{})}
	until := func(got []emitted) bool {
		if len(got) == 1 {
			close(f.first)
		}
		return len(stop) > 0 && stop[0](got)
	}
	go func() {
		var err error
		f.chunks, err = logChunks(t, stream, until)
		f.done <- err
	}()
	return f
}

// wait returns what was read once the stream ended (or stop said so).
func (f *follow) wait(t *testing.T, timeout time.Duration) []emitted {
	t.Helper()
	defer f.cancel()
	select {
	case err := <-f.done:
		if err != nil {
			t.Fatalf("follow: %v (read %q)", err, f.chunks)
		}
		return f.chunks
	case <-time.After(timeout):
		f.cancel()
		<-f.done
		t.Fatalf("follow did not end within %s; read %q", timeout, byWorker(f.chunks))
		return nil
	}
}

// Following, an agent also streams the logs of a node that registers after
// the stream started. n1 has no room for the trainer (it asks 1 CPU; n1 has
// 1, the master takes 0.1), so trainer-0 is not placed until n3, with room,
// joins: until then its log is a notice with the scheduler's reason, and
// the stream, started before n3 came, then goes on with trainer-0's lines
// from n3.
func TestLogsFollowNodeThatJoins(t *testing.T) {
	t.Parallel()
	endpoint := startEtcd(t)
	cli := etcdClient(t, endpoint)
	small := testConfig(t, "n1", endpoint)
	small.CPU = 1
	a := startAgent(t, small)
	const job = "slog-joins"
	writePlacedJob(t, cli, job, 1, 1, map[string]string{"master": "n1", "pserver-0": "n1"}, withResources(1, 0, ""))
	allInState(t, cli, job, api.WorkerRunning, "master", "pserver-0")
	const notice = "=== gtraind: trainer-0 is not placed yet: needs 1 cpu, 16Mi for trainer (1 cpu, 16Mi each); free: n1 0.9 cpu, "
	for _, req := range []*api.LogsRequest{{Job: job}, {Job: job, Worker: "trainer-0"}} {
		got := byWorker(mustLogs(t, a, req))
		if !strings.HasPrefix(got["trainer-0"], notice) || strings.Count(got["trainer-0"], "\n") != 1 {
			t.Errorf("logs %v of the unplaced trainer-0 = %q, want one notice %q...", req, got["trainer-0"], notice)
		}
		if req.Worker == "" && !strings.Contains(got["master"], "=== gtraind: starting master") {
			t.Errorf("logs %v: master = %q, want its log from n1", req, got["master"])
		}
	}

	f := startFollow(t, a, &api.LogsRequest{Job: job, Follow: true}, func(got []emitted) bool {
		return strings.Count(byWorker(got)["trainer-0"], "msg=tick") >= 5
	})
	select { // the stream has listed the nodes before n3 comes
	case <-f.first:
	case <-time.After(20 * time.Second):
		t.Fatal("the followed logs sent nothing")
	}
	big := testConfig(t, "n3", endpoint)
	big.CPU = 2
	startAgent(t, big)
	got := byWorker(f.wait(t, 30*time.Second))["trainer-0"]
	if recs := workers(t, cli, job); recs["trainer-0"].Node != "n3" {
		t.Fatalf("trainer-0 ran on %q, want n3 (the only node with room)", recs["trainer-0"].Node)
	}
	first, rest, _ := strings.Cut(got, "\n")
	if !strings.HasPrefix(first, notice) || !strings.HasPrefix(rest, "=== gtraind: starting trainer-0 (attempt 1)") ||
		!strings.HasPrefix(readLog(t, big, job, "trainer-0"), rest) {
		t.Errorf("followed log of trainer-0 = %q, want the notice %q..., then its log as n3 keeps it", got, notice)
	}
}

// An agent that accepts the connection but never answers (hung) costs the
// merged logs the relay timeout, then a notice; it does not hold them forever.
func TestLogsRelayToHungAgent(t *testing.T) {
	hung, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	go func() {
		for {
			conn, err := hung.Accept()
			if err != nil {
				return
			}
			defer conn.Close() // held open, never read
		}
	}()
	endpoint := startEtcd(t)
	cli := etcdClient(t, endpoint)
	cfg := testConfig(t, "n1", endpoint)
	cfg.LogRelayTimeout = 500 * time.Millisecond
	a := startAgent(t, cfg)
	const job = "ok-hung"
	ctx := context.Background()
	// n2 is a ready node before the job is, with its storage verified: a
	// scheduler pass that found trainer-0 on a node nobody listed moved it
	// to n1, where it ran, and the test failed (once in CI) when that run's
	// worker record came after the one written below; a pass that found n2
	// unverified would wait for the hung agent's marker.
	if err := coord.PutJSON(ctx, cli, coord.NodeKey("n2"), schema.NodeRecord{Name: "n2", APIAddr: hung.Addr().String(), State: api.NodeReady}); err != nil {
		t.Fatal(err)
	}
	writePlacement(t, cli, job, 1, 1, map[string]string{"master": "n1", "pserver-0": "n1", "trainer-0": "n2"}, []string{"n1", "n2"})
	allInState(t, cli, job, api.WorkerExited, "master", "pserver-0")
	if err := coord.PutJSON(ctx, cli, coord.WorkerKey(job, "trainer-0"), schema.WorkerRecord{Name: "trainer-0", Node: "n2", State: api.WorkerRunning}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got := byWorker(mustLogs(t, a, &api.LogsRequest{Job: job}))
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("logs with a hung agent took %s", took)
	}
	if !strings.Contains(got["trainer-0"], "cannot fetch the log of trainer-0 kept on node n2") || !strings.Contains(got["trainer-0"], "no answer for 500ms") {
		t.Errorf("log of trainer-0 on the hung n2 = %q, want a notice that n2 does not answer", got["trainer-0"])
	}
	if !strings.HasSuffix(got["master"], "done\n") {
		t.Errorf("log of master = %q, want it whole", got["master"])
	}
}
