package controlapi

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/daemon/scheduler"
	"github.com/gtrain/gtrain/jobspec"
)

var created = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func kv(t *testing.T, key string, v any) *mvccpb.KeyValue {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return &mvccpb.KeyValue{Key: []byte(key), Value: b}
}

func ptrTo(v float64) *float64 { return &v }

// testJobKVs is a job "fit" with 2 trainers and 2 pservers on n1/n2, some
// of whose workers have records.
func testJobKVs(t *testing.T, state api.JobState, progress *schema.ProgressRecord, events int) []*mvccpb.KeyValue {
	t.Helper()
	spec := jobspec.Spec{Name: "fit", Mode: "sync", Trainers: 2, Pservers: 2, Passes: 30}
	on := func(node string) schema.Assignment { return schema.Assignment{Node: node, Gen: 1} }
	placement := schema.PlacementRecord{Gen: 1, Workers: map[string]schema.Assignment{
		"master": on("n1"), "pserver-0": on("n2"), "pserver-1": on("n1"), "trainer-0": on("n2"), "trainer-1": on("n1")}}
	kvs := []*mvccpb.KeyValue{
		kv(t, coord.JobKey("fit"), schema.JobRecord{Spec: spec, Created: created}),
		kv(t, coord.PlacementKey("fit"), placement),
		kv(t, coord.StateKey("fit"), schema.StateRecord{State: state, Reason: "why"}),
		kv(t, coord.WorkerKey("fit", "master"), schema.WorkerRecord{Name: "master", Node: "n1", PID: 41, State: api.WorkerRunning, Gen: 1}),
		kv(t, coord.WorkerKey("fit", "pserver-1"), schema.WorkerRecord{Name: "pserver-1", Node: "n1", PID: 43, State: api.WorkerRunning, Restarts: 1, Gen: 1}),
		kv(t, coord.WorkerKey("fit", "trainer-0"), schema.WorkerRecord{Name: "trainer-0", Node: "n2", PID: 44, State: api.WorkerRestarting, Restarts: 2, Gen: 1,
			Crashes: []time.Time{time.Now().Add(-2 * time.Minute), time.Now().Add(-time.Second)}}),
		kv(t, coord.PserverKey("fit", 1), schema.PserverRecord{Index: 1, Addr: "127.0.0.1:4000", CheckpointStep: 1200}),
		kv(t, coord.TrainerKey("fit", 0), schema.TrainerRecord{ID: 0, Worker: "trainer-1"}),
		kv(t, coord.TrainerKey("fit", 1), schema.TrainerRecord{ID: 1, Worker: "trainer-0"}),
		kv(t, coord.MasterMetaKey("fit"), map[string]string{"ignored": "yes"}),
	}
	if progress != nil {
		kvs = append(kvs, kv(t, coord.ProgressKey("fit"), progress))
	}
	for i := range events {
		kvs = append(kvs, kv(t, coord.EventKey("fit", created.Add(time.Duration(i)), "e"), api.Event{What: fmt.Sprint("event ", i)}))
	}
	return kvs
}

func snapshotOf(t *testing.T, kvs []*mvccpb.KeyValue) *jobSnapshot {
	t.Helper()
	jobs, err := snapshotJobs(kvs)
	if err != nil {
		t.Fatal(err)
	}
	return jobs["fit"]
}

func TestJobStatus(t *testing.T) {
	progress := &schema.ProgressRecord{
		Pass: 3, Passes: 30, Step: 1234, Tasks: api.TaskCounts{Todo: 4, Pending: 2, Done: 14},
		SamplesApplied: []int64{404, 404, 404}, ModelDir: "/m",
		Metrics: api.Metrics{TrainLoss: ptrTo(21.3), TestLoss: ptrTo(23.9)},
	}
	st := jobStatus(snapshotOf(t, testJobKVs(t, api.StateRunning, progress, 250)), noneDown, time.Now())
	if st.Name != "fit" || st.State != api.StateRunning || st.Reason != "why" || st.Mode != "sync" ||
		st.Pass != 3 || st.Passes != 30 || st.Step != 1234 || st.Tasks.Done != 14 || st.ModelDir != "/m" ||
		!slices.Equal(st.SamplesApplied, []int64{404, 404, 404}) || *st.Metrics.TestLoss != 23.9 || !st.Created.Equal(created) {
		t.Errorf("status = %+v", st)
	}
	wantTrainers := []api.TrainerStatus{
		{ID: 1, Name: "trainer-0", Node: "n2", PID: 44, State: api.WorkerRestarting, Restarts: 2, BudgetUsed: 1},
		{ID: 0, Name: "trainer-1", Node: "n1", State: api.WorkerPending}, // no record yet: placed on n1
	}
	if !slices.Equal(st.Trainers, wantTrainers) {
		t.Errorf("trainers = %+v, want %+v", st.Trainers, wantTrainers)
	}
	wantPservers := []api.PserverStatus{
		{Index: 0, Name: "pserver-0", Node: "n2", State: api.WorkerPending},
		{Index: 1, Name: "pserver-1", Node: "n1", PID: 43, Addr: "127.0.0.1:4000", State: api.WorkerRunning, Restarts: 1, CheckpointStep: 1200},
	}
	if !slices.Equal(st.Pservers, wantPservers) {
		t.Errorf("pservers = %+v, want %+v", st.Pservers, wantPservers)
	}
	if st.RestartBudget != (api.RestartBudget{Limit: 5, Window: "1m0s"}) {
		t.Errorf("restart budget = %+v, want the default 5 per 1m0s", st.RestartBudget)
	}
	if st.Master != (api.MasterStatus{Name: "master", Node: "n1", PID: 41}) {
		t.Errorf("master = %+v", st.Master)
	}
	if len(st.Events) != maxEvents || st.Events[0].What != "event 50" || st.Events[maxEvents-1].What != "event 249" {
		t.Errorf("events: %d from %q to %q, want the newest %d", len(st.Events), st.Events[0].What, st.Events[len(st.Events)-1].What, maxEvents)
	}
}

func TestJobStatusWarnsOfFailingWrites(t *testing.T) {
	kvs := testJobKVs(t, api.StateRunning, nil, 0)
	st := jobStatus(snapshotOf(t, kvs), noneDown, time.Now())
	if st.Warnings == nil || len(st.Warnings) != 0 {
		t.Errorf("warnings = %#v, want an empty list", st.Warnings)
	}
	const w = "pserver-1 cannot write checkpoint step 300 to /c: is a directory; training goes on, recovery will use older checkpoints"
	const memw = "pserver-1 holds 90 MiB (embedding tables: 5 rows, 1 MiB), 90% of resources.pserver.memory 100 MiB"
	kvs = append(kvs, kv(t, coord.PserverKey("fit", 1), schema.PserverRecord{Index: 1, CheckpointWarning: w, MemoryWarning: memw}))
	if st := jobStatus(snapshotOf(t, kvs), noneDown, time.Now()); !slices.Equal(st.Warnings, []string{w, memw}) {
		t.Errorf("warnings = %q, want %q", st.Warnings, []string{w, memw})
	}
	kvs = append(kvs, kv(t, coord.PserverKey("fit", 1), schema.PserverRecord{Index: 1, CheckpointWarning: w}))
	// The master's (a model write that fails) comes first, from its progress record.
	const mw = "master cannot write the model of pass 3 to /m: no space left on device; training waits for it"
	kvs = append(kvs, kv(t, coord.ProgressKey("fit"), schema.ProgressRecord{Pass: 3, Warnings: []string{mw}}))
	if st := jobStatus(snapshotOf(t, kvs), noneDown, time.Now()); !slices.Equal(st.Warnings, []string{mw, w}) {
		t.Errorf("warnings = %q, want %q", st.Warnings, []string{mw, w})
	}
	kvs = append(kvs, kv(t, coord.StateKey("fit"), schema.StateRecord{State: api.StateSucceeded}))
	if st := jobStatus(snapshotOf(t, kvs), noneDown, time.Now()); len(st.Warnings) != 0 {
		t.Errorf("a job that ended still warns: %q", st.Warnings)
	}
}

func TestJobStatusWithoutProgress(t *testing.T) {
	st := jobStatus(snapshotOf(t, testJobKVs(t, api.StatePending, nil, 0)), noneDown, time.Now())
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"samples_applied", "trainers", "pservers", "events"} {
		if _, isArray := doc[key].([]any); !isArray {
			t.Errorf("%s = %v, want an array (never null)", key, doc[key])
		}
	}
	if st.Pass != 0 || st.Passes != 30 || st.Step != 0 || st.Metrics.TrainLoss != nil {
		t.Errorf("status without progress = %+v, want zero values and the spec's passes", st)
	}
}

func TestJobRow(t *testing.T) {
	now := created.Add(3*time.Minute + 12*time.Second)
	row := jobRow(snapshotOf(t, testJobKVs(t, api.StatePending, nil, 0)), now)
	want := api.JobRow{Name: "fit", State: api.StatePending, Passes: 30, Trainers: 2, Pservers: 2, Created: created, Age: "3m12s"}
	if row != want {
		t.Errorf("row = %+v, want %+v", row, want)
	}
	for _, tc := range []struct {
		metrics api.Metrics
		want    *float64
	}{
		{api.Metrics{TrainLoss: ptrTo(2), TestLoss: ptrTo(3)}, ptrTo(3)},
		{api.Metrics{TrainLoss: ptrTo(2)}, ptrTo(2)},
		{api.Metrics{}, nil},
	} {
		row := jobRow(snapshotOf(t, testJobKVs(t, api.StateRunning, &schema.ProgressRecord{Pass: 2, Metrics: tc.metrics}, 0)), now)
		if (row.Loss == nil) != (tc.want == nil) || row.Loss != nil && *row.Loss != *tc.want || row.Pass != 2 {
			t.Errorf("loss of %+v = %v, want %v", tc.metrics, row.Loss, tc.want)
		}
	}
}

func TestWorkerRows(t *testing.T) {
	got := rowSummary(workerRows(snapshotOf(t, testJobKVs(t, api.StateRunning, nil, 0)), noneDown))
	want := []string{"master@n1:running", "pserver-0@n2:pending", "pserver-1@n1:running", "trainer-0@n2:restarting", "trainer-1@n1:pending"}
	if !slices.Equal(got, want) {
		t.Errorf("worker rows = %v, want %v", got, want)
	}
}

func TestNodeRows(t *testing.T) {
	kvs := testJobKVs(t, api.StateRunning, nil, 0)
	ended := jobspec.Spec{Name: "old", Trainers: 1, Pservers: 1}
	kvs = append(kvs,
		kv(t, coord.JobKey("old"), schema.JobRecord{Spec: ended}),
		kv(t, coord.PlacementKey("old"), schema.PlacementRecord{Workers: map[string]schema.Assignment{
			"master": {Node: "n1"}, "pserver-0": {Node: "n1"}, "trainer-0": {Node: "n1"}}}),
		kv(t, coord.StateKey("old"), schema.StateRecord{State: api.StateSucceeded}))
	jobs, err := snapshotJobs(kvs)
	if err != nil {
		t.Fatal(err)
	}
	node := func(name, addr string, c schema.Capacity, live, draining bool) coord.ClusterNode {
		return coord.ClusterNode{Name: name, Record: schema.NodeRecord{Name: name, APIAddr: addr, Capacity: c}, Live: live, Draining: draining}
	}
	nodes := []coord.ClusterNode{
		node("n2", "b:7164", schema.Capacity{CPU: 8, Memory: 1 << 30}, true, false),
		node("n1", "a:7164", schema.Capacity{CPU: 4}, true, false),
		node("n3", "c:7164", schema.Capacity{}, true, true),
		node("n4", "d:7164", schema.Capacity{}, false, true),
	}
	rows := nodeRows(nodes, jobs, func(n string) bool { return n == "n2" })
	want := []api.NodeRow{
		{Name: "n1", Addr: "a:7164", State: "ready", CPU: 4, Roles: []string{"fit/master", "fit/pserver-1", "fit/trainer-1"}},
		{Name: "n2", Addr: "b:7164", State: "down", CPU: 8, Memory: 1 << 30, Roles: []string{"fit/pserver-0", "fit/trainer-0"}},
		{Name: "n3", Addr: "c:7164", State: "draining", Roles: []string{}},
		{Name: "n4", Addr: "d:7164", State: "down", Roles: []string{}},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows = %+v", rows)
	}
	for i := range want {
		r, w := rows[i], want[i]
		if r.Name != w.Name || r.Addr != w.Addr || r.State != w.State || r.CPU != w.CPU || r.Memory != w.Memory || !slices.Equal(r.Roles, w.Roles) || r.Roles == nil {
			t.Errorf("row %d = %+v, want %+v", i, r, w)
		}
	}
	// Used capacity: what fit's workers placed on a node ask; the ended job
	// "old" on n1 asks nothing any more.
	req := scheduler.Requests(&jobs["fit"].Record.Spec)
	n1 := req["master"].Plus(req["pserver-1"]).Plus(req["trainer-1"])
	if rows[0].CPUUsed != n1.CPU || rows[0].MemoryUsed != n1.Memory || n1.CPU <= 0 || n1.Memory <= 0 {
		t.Errorf("n1 uses %v CPU, %d bytes; want fit's master, pserver-1 and trainer-1: %+v", rows[0].CPUUsed, rows[0].MemoryUsed, n1)
	}
	if rows[2].CPUUsed != 0 || rows[2].MemoryUsed != 0 {
		t.Errorf("n3, with nothing placed, uses %+v", rows[2])
	}
}

func noneDown(string) bool { return false }

// rowSummary is each worker row as "name@node:state".
func rowSummary(rows []api.WorkerRow) []string {
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%s@%s:%s", r.Name, r.Node, r.State))
	}
	return out
}

// A worker is never shown running on a node that is down, nor on the node
// it moved away from; the reason says why a job waits.
func TestWorkerViewNeverLies(t *testing.T) {
	kvs := testJobKVs(t, api.StateRunning, nil, 0)
	moved := schema.PlacementRecord{Gen: 2, Reason: "needs 1 cpu for trainer-1", Workers: map[string]schema.Assignment{
		"master": {Node: "n1", Gen: 1}, "pserver-0": {Node: "n2", Gen: 1}, "pserver-1": {Node: "n3", Gen: 2}, "trainer-0": {Node: "n2", Gen: 1}}}
	kvs = append(kvs, kv(t, coord.PlacementKey("fit"), moved))
	s := snapshotOf(t, kvs)
	s.State = schema.StateRecord{State: api.StateRunning}
	got := rowSummary(workerRows(s, func(n string) bool { return n == "n2" }))
	want := []string{"master@n1:running", "pserver-0@n2:pending", "pserver-1@n3:pending", "trainer-0@n2:lost", "trainer-1@:pending"}
	if !slices.Equal(got, want) {
		t.Errorf("worker rows = %v, want %v", got, want)
	}
	if st := jobStatus(s, noneDown, time.Now()); st.Reason != "needs 1 cpu for trainer-1" {
		t.Errorf("reason of a running job the scheduler cannot complete = %q", st.Reason)
	}
	// The job ended: a process still alive is on its way out, not running it.
	s.State = schema.StateRecord{State: api.StateSucceeded}
	if got := rowSummary(workerRows(s, noneDown)); got[0] != "master@n1:exiting" {
		t.Errorf("worker rows of a job that ended = %v, want the master exiting", got)
	}
	s.State = schema.StateRecord{State: api.StateRunning}
	if s.Record.Placement["pserver-1"] != "n3" {
		t.Errorf("the job record's placement = %v, want the placement record's", s.Record.Placement)
	}
	for _, tc := range []struct {
		state     schema.StateRecord
		placement bool
		want      string
	}{
		{schema.StateRecord{State: api.StatePending}, false, "waiting for the scheduler to place it"},
		{schema.StateRecord{State: api.StatePending}, true, "needs 1 cpu for trainer-1"},
		{schema.StateRecord{State: api.StateFailed, Reason: "trainer-0 crashed"}, true, "trainer-0 crashed"},
		{schema.StateRecord{State: api.StateSucceeded}, true, ""},
	} {
		s.State = tc.state
		s.Placement = nil
		if tc.placement {
			s.Placement = &moved
		}
		if got := s.reason(); got != tc.want {
			t.Errorf("reason of %+v (placement %v) = %q, want %q", tc.state, tc.placement, got, tc.want)
		}
	}
}

func TestSnapshotNamesUndecodableKey(t *testing.T) {
	bad := &mvccpb.KeyValue{Key: []byte(coord.ProgressKey("fit")), Value: []byte("{")}
	if _, err := snapshotJobs([]*mvccpb.KeyValue{bad}); err == nil || !strings.Contains(err.Error(), coord.ProgressKey("fit")) {
		t.Errorf("undecodable progress: %v, want an error naming the key", err)
	}
}

func TestHumanAge(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"},
		{45 * time.Second, "45s"},
		{3*time.Minute + 12*time.Second, "3m12s"},
		{2*time.Hour + 5*time.Minute + 9*time.Second, "2h5m"},
		{76 * time.Hour, "3d4h"},
	} {
		if got := humanAge(tc.d); got != tc.want {
			t.Errorf("humanAge(%s) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// The devices placement gave the workers show in `job workers` (a worker
// not given any shows an empty list) and on their nodes' rows.
func TestGPUsShown(t *testing.T) {
	kvs := testJobKVs(t, api.StateRunning, nil, 0)
	placement := schema.PlacementRecord{Gen: 1, Workers: map[string]schema.Assignment{
		"master": {Node: "n1", Gen: 1}, "pserver-0": {Node: "n2", Gen: 1}, "pserver-1": {Node: "n1", Gen: 1},
		"trainer-0": {Node: "n2", Gen: 1, GPUs: []int{0, 1}}, "trainer-1": {Node: "n1", Gen: 1, GPUs: []int{3}}}}
	for i, e := range kvs {
		if string(e.Key) == coord.PlacementKey("fit") {
			kvs[i] = kv(t, coord.PlacementKey("fit"), placement)
		}
	}
	s := snapshotOf(t, kvs)
	got := map[string][]int{}
	for _, r := range workerRows(s, noneDown) {
		if r.GPUs == nil {
			t.Errorf("%s: gpus is null, want a list", r.Name)
		}
		got[r.Name] = r.GPUs
	}
	if !slices.Equal(got["trainer-0"], []int{0, 1}) || !slices.Equal(got["trainer-1"], []int{3}) || len(got["master"]) != 0 {
		t.Errorf("worker gpus = %v", got)
	}
	jobs, err := snapshotJobs(kvs)
	if err != nil {
		t.Fatal(err)
	}
	nodes := []coord.ClusterNode{
		{Name: "n1", Live: true, Record: schema.NodeRecord{Name: "n1", Capacity: schema.Capacity{GPUs: 4}}},
		{Name: "n2", Live: true, Record: schema.NodeRecord{Name: "n2", Capacity: schema.Capacity{GPUs: 2}}},
	}
	rows := nodeRows(nodes, jobs, noneDown)
	want := [][]api.GPUDevice{{{Index: 3, Holder: "fit/trainer-1"}}, {{Index: 0, Holder: "fit/trainer-0"}, {Index: 1, Holder: "fit/trainer-0"}}}
	for i, r := range rows {
		if !slices.Equal(r.Devices, want[i]) {
			t.Errorf("%s devices = %+v, want %+v", r.Name, r.Devices, want[i])
		}
	}
}
