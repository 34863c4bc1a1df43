package main

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
)

const validSpec = `name: fit-a-line
trainers: 2
pservers: 2
passes: 3
model: {kind: linear, inputs: 13}
data: {train: data/housing-train-*}
`

func specFile(t *testing.T, content string) string {
	t.Helper()
	return writeFile(t, filepath.Join(t.TempDir(), "job.yaml"), content)
}

// offline makes any attempt to reach an agent fail the test.
func offline(t *testing.T, a *app) {
	a.dial = func(s settings) (api.ControlClient, io.Closer, error) {
		t.Fatalf("gctl contacted the agent at %s; it must reject the input first", s.Addr)
		return nil, nil, nil
	}
}

func wantRun(t *testing.T, r testRun, code int, stdout, stderr []string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", r.code, code, r.stdout, r.stderr)
	}
	for _, w := range stdout {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, r.stdout)
		}
	}
	for _, w := range stderr {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
}

func TestJobStartRejectsInvalidSpecWithoutContactingTheAgent(t *testing.T) {
	tests := []struct {
		name    string
		spec    string
		args    []string
		wantErr []string
	}{
		{"negative trainers", strings.Replace(validSpec, "trainers: 2", "trainers: -1", 1), nil, []string{"trainers", "at least 1"}},
		{"unknown field", validSpec + "bogus_field: 1\n", nil, []string{"bogus_field"}},
		{"override breaks the spec", validSpec, []string{"--pservers", "0"}, []string{"pservers", "--pservers"}},
		{"bad --name", validSpec, []string{"--name", "my_job"}, []string{"--name", "my_job", "no '_'"}},
		{"parameters cannot fit the pserver's memory", strings.Replace(validSpec, "model: {kind: linear, inputs: 13}",
			"model: {kind: mlp, inputs: 13, outputs: 1, hidden: [100000, 100000]}\nresources: {pserver: {cpu: 1, memory: 512Mi}}", 1),
			nil, []string{"resources.pserver.memory", "512Mi", "10001600001 parameters", "2 pserver(s) hold up to 5000800001 each",
				"request at least 18.7Gi"}},
		{"--pservers 1 makes the share too big", strings.Replace(validSpec, "model: {kind: linear, inputs: 13}",
			"model: {kind: mlp, inputs: 13, outputs: 1, hidden: [1000, 1000]}\nresources: {pserver: {cpu: 1, memory: 3Mi}}", 1),
			[]string{"--pservers", "1"}, []string{"resources.pserver.memory", "1 pserver(s) hold up to 1016001 each"}},
		{"missing file", "", nil, []string{"does not exist", "-f"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, stdout, stderr := newTestApp(t)
			offline(t, a)
			file := filepath.Join(t.TempDir(), "missing.yaml")
			if tt.spec != "" {
				file = specFile(t, tt.spec)
			}
			args := append([]string{"--addr", "bogus.invalid:1", "job", "start", "-f", file}, tt.args...)
			r := runGctl(t, a, stdout, stderr, args...)
			wantRun(t, r, exitRejected, nil, append(tt.wantErr, "gctl: "))
			if r.stdout != "" {
				t.Errorf("stdout not empty: %q", r.stdout)
			}
		})
	}
}

func TestJobStartDetach(t *testing.T) {
	f := &fakeAgent{}
	addr := startAgent(t, f)
	a, stdout, stderr := newTestApp(t)
	file := specFile(t, validSpec)
	r := runGctl(t, a, stdout, stderr, "--addr", addr, "job", "start", "-f", file, "--name", "fit2", "--trainers", "4", "--passes", "7", "--detach")
	wantRun(t, r, exitOK, []string{"fit2\n", "follow it with: gctl job status fit2"}, nil)

	var sent struct {
		Name     string `json:"name"`
		Trainers int    `json:"trainers"`
		Pservers int    `json:"pservers"`
		Passes   int    `json:"passes"`
		Data     struct {
			Train string `json:"train"`
		} `json:"data"`
	}
	if err := json.Unmarshal(f.submitted, &sent); err != nil {
		t.Fatalf("submitted spec is not JSON: %v", err)
	}
	if sent.Name != "fit2" || sent.Trainers != 4 || sent.Pservers != 2 || sent.Passes != 7 {
		t.Errorf("submitted %+v, want the flag overrides applied (fit2, 4 trainers, 2 pservers, 7 passes)", sent)
	}
	if want := filepath.Join(filepath.Dir(file), "data", "housing-train-*"); sent.Data.Train != want {
		t.Errorf("data.train = %q, want %q (absolute, relative to the spec)", sent.Data.Train, want)
	}
	if f.getCalls != 0 {
		t.Errorf("--detach polled the job %d times", f.getCalls)
	}
}

func TestJobStartMonitorsUntilTheEnd(t *testing.T) {
	runningSt := api.JobStatus{Name: "fit-a-line", State: api.StateRunning, Pass: 1, Passes: 3,
		Events: []api.Event{{Time: testNow, What: "pserver-1 restarted from checkpoint step 1200"}}}
	succeeded := runningSt
	succeeded.State, succeeded.Pass = api.StateSucceeded, 3
	succeeded.Metrics = api.Metrics{TrainLoss: ptr(21.3), TestLoss: ptr(23.9)}
	succeeded.ModelDir = "/data/jobs/fit-a-line/model"
	failed := runningSt
	failed.State, failed.Reason = api.StateFailed, "trainer-0 exited 3 times in a row"

	t.Run("succeeded", func(t *testing.T) {
		addr := startAgent(t, &fakeAgent{statuses: []api.JobStatus{runningSt, runningSt, succeeded}})
		a, stdout, stderr := newTestApp(t)
		r := runGctl(t, a, stdout, stderr, "--addr", addr, "job", "start", "-f", specFile(t, validSpec))
		wantRun(t, r, exitOK, []string{
			"job fit-a-line submitted",
			"pserver-1 restarted from checkpoint step 1200",
			"[RUNNING]", "[SUCCEEDED]",
			"job fit-a-line SUCCEEDED after 3/3 passes",
			"train_loss 21.3  test_loss 23.9",
			"model_dir: /data/jobs/fit-a-line/model",
		}, nil)
		if n := strings.Count(r.stdout, "restarted from checkpoint"); n != 1 {
			t.Errorf("event printed %d times, want once", n)
		}
	})
	t.Run("failed", func(t *testing.T) {
		addr := startAgent(t, &fakeAgent{statuses: []api.JobStatus{runningSt, failed}})
		a, stdout, stderr := newTestApp(t)
		r := runGctl(t, a, stdout, stderr, "--addr", addr, "job", "start", "-f", specFile(t, validSpec))
		wantRun(t, r, exitFailure, []string{"job fit-a-line FAILED", "reason: trainer-0 exited 3 times in a row"},
			[]string{"gctl: ", "FAILED: trainer-0 exited 3 times in a row", "gctl job logs fit-a-line"})
	})
	t.Run("json", func(t *testing.T) {
		addr := startAgent(t, &fakeAgent{statuses: []api.JobStatus{runningSt, succeeded}})
		a, stdout, stderr := newTestApp(t)
		r := runGctl(t, a, stdout, stderr, "--addr", addr, "-o", "json", "job", "start", "-f", specFile(t, validSpec))
		wantRun(t, r, exitOK, nil, []string{"[RUNNING]"})
		var st api.JobStatus
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || st.State != api.StateSucceeded || st.ModelDir == "" {
			t.Errorf("stdout is not the final job status document (%v):\n%s", err, r.stdout)
		}
	})
	t.Run("ctrl-c detaches", func(t *testing.T) {
		f := &fakeAgent{statuses: []api.JobStatus{runningSt}}
		addr := startAgent(t, f)
		a, stdout, stderr := newTestApp(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		a.wait = func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() }
		code := run(ctx, a, []string{"--addr", addr, "job", "start", "-f", specFile(t, validSpec)})
		wantRun(t, testRun{code, stdout.String(), stderr.String()}, exitOK,
			[]string{"detached; job fit-a-line keeps running (gctl job status fit-a-line)"}, nil)
		if f.stopReq != nil {
			t.Error("Ctrl-C stopped the job")
		}
	})
	t.Run("name in use", func(t *testing.T) {
		addr := startAgent(t, &fakeAgent{submitErr: status.Error(codes.AlreadyExists, `job "fit-a-line" already exists`)})
		a, stdout, stderr := newTestApp(t)
		r := runGctl(t, a, stdout, stderr, "--addr", addr, "job", "start", "-f", specFile(t, validSpec))
		wantRun(t, r, exitRejected, nil, []string{"already exists", "--name", "--purge"})
	})
}

func TestListings(t *testing.T) {
	f := &fakeAgent{
		jobs: []api.JobRow{{Name: "fit-a-line", State: api.StateRunning, Pass: 3, Passes: 30, Trainers: 2, Pservers: 2, Age: "5m"}},
		workers: []api.WorkerRow{{Name: "master", Node: "n1", PID: 4241, State: "running",
			Start: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}},
		nodes: []api.NodeRow{{Name: "n1", Addr: "127.0.0.1:7164", State: "ready", CPU: 8, Memory: 8 << 30, Roles: []string{"master"}}},
	}
	addr := startAgent(t, f)
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"job", "list"}, []string{"NAME", "LOSS", "AGE", "fit-a-line", "RUNNING", "3/30", "5m"}},
		{[]string{"job", "list", "-o", "json"}, []string{`"name": "fit-a-line"`, `"loss": null`, `"passes": 30`}},
		{[]string{"job", "workers", "fit-a-line"}, []string{"NAME", "RESTARTS", "START", "master", "4241", "2026-11-21 10:00:00"}},
		{[]string{"job", "workers", "fit-a-line", "-o", "json"}, []string{`"node": "n1"`, `"pid": 4241`, `"restarts": 0`, `"start": "2026-11-21T10:00:00Z"`}},
		{[]string{"node", "list"}, []string{"NAME", "ADDR", "CPU", "MEMORY", "ROLES", "n1", "ready", "8Gi", "master"}},
		{[]string{"node", "list", "-o", "json"}, []string{`"cpu": 8`, `"memory": 8589934592`, `"roles": [`}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			a, stdout, stderr := newTestApp(t)
			r := runGctl(t, a, stdout, stderr, append([]string{"--addr", addr}, tt.args...)...)
			wantRun(t, r, exitOK, tt.want, nil)
			if strings.Contains(strings.Join(tt.args, " "), "json") && !strings.HasPrefix(r.stdout, "[") {
				t.Errorf("-o json listing is not an array: %s", r.stdout)
			}
		})
	}

	empty := startAgent(t, &fakeAgent{})
	a, stdout, stderr := newTestApp(t)
	r := runGctl(t, a, stdout, stderr, "--addr", empty, "job", "list", "-o", "json")
	wantRun(t, r, exitOK, nil, nil)
	if r.stdout != "[]\n" {
		t.Errorf("empty job list = %q, want []", r.stdout)
	}
}

func TestNodeDrainAndUndrain(t *testing.T) {
	f := &fakeAgent{nodes: []api.NodeRow{{Name: "n1", State: api.NodeReady, CPU: 2, Roles: []string{"fit/pserver-0", "fit/trainer-1"}}}}
	addr := startAgent(t, f)
	tests := []struct {
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{[]string{"node", "drain", "n1"}, exitOK, []string{"node n1 is draining: its roles (fit/pserver-0, fit/trainer-1) move to other nodes"}, nil},
		{[]string{"node", "drain", "n1", "-o", "json"}, exitOK, []string{`"name": "n1"`, `"state": "draining"`}, nil},
		{[]string{"node", "undrain", "n1"}, exitOK, []string{"node n1 is ready: it takes new work again"}, nil},
		{[]string{"node", "drain", "nope"}, exitRejected, nil, []string{"gctl: drain node nope: node nope not found; see gctl node list"}},
		{[]string{"node", "drain"}, exitRejected, nil, []string{"takes 1 argument(s) (NAME)"}},
		{[]string{"node", "undrain", "a", "b"}, exitRejected, nil, []string{"takes 1 argument(s) (NAME)"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			a, stdout, stderr := newTestApp(t)
			r := runGctl(t, a, stdout, stderr, append([]string{"--addr", addr}, tt.args...)...)
			wantRun(t, r, tt.code, tt.stdout, tt.stderr)
			if strings.Contains(r.stderr, "gctl job list") {
				t.Errorf("a node error points at the job list: %s", r.stderr)
			}
		})
	}
}

func TestJobStatus(t *testing.T) {
	st := api.JobStatus{Name: "fit-a-line", State: api.StateRunning, Mode: "sync", Pass: 3, Passes: 30, Step: 1234,
		SamplesApplied: []int64{404, 404}, Metrics: api.Metrics{TestLoss: ptr(23.9)}}
	addr := startAgent(t, &fakeAgent{statuses: []api.JobStatus{st}})

	a, stdout, stderr := newTestApp(t)
	r := runGctl(t, a, stdout, stderr, "--addr", addr, "job", "status", "fit-a-line")
	wantRun(t, r, exitOK, []string{"State:", "RUNNING", "Pass:", "3/30", "exact, 404 per pass × 2 passes", "test_loss 23.9"}, nil)

	a, stdout, stderr = newTestApp(t)
	r = runGctl(t, a, stdout, stderr, "--addr", addr, "job", "status", "fit-a-line", "-o", "json")
	wantRun(t, r, exitOK, []string{`"samples_applied": [`, `"test_accuracy": null`, `"step": 1234`}, nil)

	pending := api.JobStatus{Name: "big", State: api.StatePending, Reason: "needs 3 cpu for 3 trainers (1 cpu each); free: n1 0.5 cpu, n2 1 cpu"}
	addr = startAgent(t, &fakeAgent{statuses: []api.JobStatus{pending}})
	a, stdout, stderr = newTestApp(t)
	r = runGctl(t, a, stdout, stderr, "--addr", addr, "job", "status", "big")
	wantRun(t, r, exitOK, []string{"PENDING", "Reason:", "needs 3 cpu for 3 trainers (1 cpu each); free: n1 0.5 cpu, n2 1 cpu"}, nil)

	missing := startAgent(t, &fakeAgent{getErr: status.Error(codes.NotFound, `job "nope" not found`)})
	a, stdout, stderr = newTestApp(t)
	r = runGctl(t, a, stdout, stderr, "--addr", missing, "job", "status", "nope")
	wantRun(t, r, exitRejected, nil, []string{`gctl: get job "nope"`, "not found", "gctl job list"})
}

func TestJobLogs(t *testing.T) {
	f := &fakeAgent{logs: []*api.LogChunk{
		{Worker: "master", Data: []byte("starting\nready\n")},
		{Worker: "trainer-0", Data: []byte("pass 1\n")},
	}}
	addr := startAgent(t, f)

	a, stdout, stderr := newTestApp(t)
	r := runGctl(t, a, stdout, stderr, "--addr", addr, "job", "logs", "fit-a-line", "-n", "20")
	wantRun(t, r, exitOK, nil, nil)
	if want := "master | starting\nmaster | ready\ntrainer-0 | pass 1\n"; r.stdout != want {
		t.Errorf("all workers' logs:\n%q\nwant\n%q", r.stdout, want)
	}
	if f.logReq.GetLines() != 20 || f.logReq.GetFollow() || f.logReq.GetWorker() != "" || f.logReq.GetJob() != "fit-a-line" {
		t.Errorf("request %v, want job fit-a-line, all workers, 20 lines, no follow", f.logReq)
	}

	f.logs = []*api.LogChunk{{Worker: "trainer-0", Data: []byte("pass 1\npass 2\n")}}
	a, stdout, stderr = newTestApp(t)
	r = runGctl(t, a, stdout, stderr, "--addr", addr, "job", "logs", "fit-a-line", "-w", "trainer-0", "-f")
	wantRun(t, r, exitOK, nil, nil)
	if r.stdout != "pass 1\npass 2\n" {
		t.Errorf("one worker's log = %q, want it unprefixed", r.stdout)
	}
	if !f.logReq.GetFollow() || f.logReq.GetWorker() != "trainer-0" {
		t.Errorf("request %v, want worker trainer-0 with follow", f.logReq)
	}
}

func TestJobStopAndScale(t *testing.T) {
	f := &fakeAgent{statuses: []api.JobStatus{{Name: "fit-a-line", State: api.StateRunning, ModelDir: "/var/lib/gtrain/jobs/fit-a-line/model"}}}
	addr := startAgent(t, f)
	a, stdout, stderr := newTestApp(t)
	r := runGctl(t, a, stdout, stderr, "--addr", addr, "job", "stop", "fit-a-line", "--purge", "--yes")
	wantRun(t, r, exitOK, []string{"job fit-a-line STOPPED", "trainer-0, pserver-0, master", "name fit-a-line can be used again"}, nil)
	if f.stopReq.GetName() != "fit-a-line" || !f.stopReq.GetPurge() {
		t.Errorf("stop request %v, want fit-a-line with purge", f.stopReq)
	}

	a, stdout, stderr = newTestApp(t)
	r = runGctl(t, a, stdout, stderr, "--addr", addr, "job", "scale", "fit-a-line", "--trainers", "4")
	wantRun(t, r, exitOK, []string{"job fit-a-line: trainers 1 -> 4 (bounds [1, 8])"}, nil)
	if f.scaleReq.GetName() != "fit-a-line" || f.scaleReq.GetTrainers() != 4 || f.scaleReq.Pservers != nil {
		t.Errorf("scale request %v, want fit-a-line to 4 trainers, pservers unset", f.scaleReq)
	}
	a, stdout, stderr = newTestApp(t)
	r = runGctl(t, a, stdout, stderr, "--addr", addr, "job", "scale", "fit-a-line", "--trainers", "9")
	wantRun(t, r, exitRejected, nil, []string{"--trainers 9", "bounds [min 1, max 8]"})
	for _, args := range [][]string{{"--trainers", "0"}, {}} {
		a, stdout, stderr = newTestApp(t)
		offline(t, a)
		r = runGctl(t, a, stdout, stderr, append([]string{"job", "scale", "fit-a-line"}, args...)...)
		wantRun(t, r, exitRejected, nil, []string{"--trainers"})
	}
}

func TestUnreachableAgent(t *testing.T) {
	addr := closedAddr(t)
	a, stdout, stderr := newTestApp(t)
	r := runGctl(t, a, stdout, stderr, "--addr", addr, "job", "list")
	wantRun(t, r, exitFailure, nil, []string{
		"gctl: cannot reach the gtrain agent at " + addr + " (from --addr)",
		"is `gtraind agent` running? (set --addr or GCTL_ADDR)",
	})
}

func TestRejectedCommandLines(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"bogus"}, []string{`unknown command "bogus"`, "data, job, node"}},
		{[]string{"job", "bogus"}, []string{`unknown command "bogus" for "gctl job"`}},
		{[]string{"job", "list", "--bogus"}, []string{"unknown flag: --bogus", "gctl job list --help"}},
		{[]string{"job", "status"}, []string{"takes 1 argument(s) (NAME), got 0"}},
		{[]string{"job", "status", "a", "b"}, []string{"got 2"}},
		{[]string{"job", "status", "Bad_Name"}, []string{"Bad_Name", "no '_'"}},
		{[]string{"job", "list", "-o", "yaml"}, []string{`-o "yaml"`, "-o table or -o json"}},
		{[]string{"job", "start"}, []string{"-f FILE"}},
		{[]string{"job", "start", "-f", "x.yaml", "--trainers", "many"}, []string{"--trainers"}},
		{[]string{"job", "logs", "j", "-n", "-1"}, []string{"-n -1"}},
		{[]string{"job", "scale", "j"}, []string{"--trainers N"}},
		{[]string{"data", "convert", "--input", "x"}, []string{"--format"}},
		{[]string{"data", "convert", "--format", "parquet", "--input", "x", "--out", "d/p", "--shards", "1"}, []string{`"parquet"`, "whitespace, csv, tsv, idx, movielens"}},
		{[]string{"data", "convert", "--format", "idx", "--input", "x", "--out", "d/p", "--shards", "1"}, []string{"--labels"}},
		{[]string{"data", "convert", "--format", "csv", "--input", "x", "--out", "d/p"}, []string{"--shards"}},
		{[]string{"data", "convert", "--format", "csv", "--input", "x", "--out", "d/p", "--shards", "2", "--test-fraction", "1"}, []string{"--test-fraction"}},
		{[]string{"data", "convert", "--format", "csv", "--input", "x", "--out", "d/p", "--shards", "1", "--part", "dev"}, []string{`--part "dev"`}},
		{[]string{"data", "convert", "--format", "csv", "--input", "x", "--out", "d/p", "--shards", "1", "--normalize", "--stats", "s"}, []string{"--normalize", "--stats"}},
		{[]string{"data", "convert", "--format", "csv", "--input", "x", "--out", "d/p", "--shards", "1", "--part", "test", "--normalize"}, []string{"--stats FILE"}},
		{[]string{"data", "convert", "--format", "csv", "--input", "x", "--out", "d/p", "--shards", "1", "--part", "test", "--test-fraction", "0.1"}, []string{"--test-fraction"}},
		{[]string{"--config", "/nonexistent/gctl.yaml", "job", "list"}, []string{"/nonexistent/gctl.yaml"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			a, stdout, stderr := newTestApp(t)
			offline(t, a)
			r := runGctl(t, a, stdout, stderr, tt.args...)
			wantRun(t, r, exitRejected, nil, append(tt.want, "gctl: "))
		})
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"job"}, {"job", "start", "--help"}, {"data", "convert", "-h"}} {
		a, stdout, stderr := newTestApp(t)
		offline(t, a)
		r := runGctl(t, a, stdout, stderr, args...)
		wantRun(t, r, exitOK, []string{"Usage:"}, nil)
		if r.stderr != "" {
			t.Errorf("%v: stderr %q", args, r.stderr)
		}
	}
}

func TestDataConvert(t *testing.T) {
	dir := t.TempDir()
	var raw strings.Builder
	for i := range 10 {
		raw.WriteString(strings.Repeat("1.5 ", 3) + string(rune('0'+i)) + "\n")
	}
	input := writeFile(t, filepath.Join(dir, "raw.data"), raw.String())
	prefix := filepath.Join(dir, "out", "toy")

	a, stdout, stderr := newTestApp(t)
	offline(t, a)
	r := runGctl(t, a, stdout, stderr, "data", "convert", "--format", "whitespace", "--input", input,
		"--out", prefix, "--shards", "2", "--test-fraction", "0.2", "--normalize", "--chunk-records", "3")
	wantRun(t, r, exitOK, []string{
		"train: 8 records, 3 features, 2 shards",
		prefix + "-train-00000-of-00002",
		"test: 2 records",
		"normalization statistics: ",
	}, nil)
	matches, _ := filepath.Glob(prefix + "-train-*")
	if len(matches) != 2 {
		t.Errorf("train shards on disk: %v, want 2", matches)
	}

	a, stdout, stderr = newTestApp(t)
	r = runGctl(t, a, stdout, stderr, "-o", "json", "data", "convert", "--format", "whitespace", "--input", input,
		"--out", filepath.Join(dir, "json", "toy"), "--shards", "1")
	wantRun(t, r, exitOK, nil, nil)
	var out convertOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.TrainRecords != 10 || len(out.TrainFiles) != 1 || out.TestFiles == nil {
		t.Errorf("-o json: %+v (%v) from %s", out, err, r.stdout)
	}

	a, stdout, stderr = newTestApp(t)
	r = runGctl(t, a, stdout, stderr, "data", "convert", "--format", "whitespace", "--input", filepath.Join(dir, "nope"),
		"--out", prefix, "--shards", "1")
	wantRun(t, r, exitRejected, nil, []string{"nope", "--input"})

	bad := writeFile(t, filepath.Join(dir, "bad.data"), "1 2 x\n")
	a, stdout, stderr = newTestApp(t)
	r = runGctl(t, a, stdout, stderr, "data", "convert", "--format", "whitespace", "--input", bad, "--out", prefix, "--shards", "1")
	wantRun(t, r, exitRejected, nil, []string{"bad.data"})
}

// certWarnings warns about a node certificate within 14 days of expiry or
// expired, and not about one further off or a node without TLS.
func TestCertWarnings(t *testing.T) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	rows := []api.NodeRow{
		{Name: "far", CertNotAfter: at(15 * 24 * time.Hour)},
		{Name: "soon", CertNotAfter: at(13*24*time.Hour + time.Hour)},
		{Name: "gone", CertNotAfter: at(-time.Hour)},
		{Name: "plain"},
	}
	got := certWarnings(rows, now)
	if len(got) != 2 || !strings.Contains(got[0], "node soon: its certificate expires in 13 days") ||
		!strings.Contains(got[1], "node gone: its certificate expired on") {
		t.Errorf("warnings %q", got)
	}
}
