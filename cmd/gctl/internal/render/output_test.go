package render

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
)

// lines splits output into lines with runs of spaces collapsed, so the
// assertions check cells and their order, not tabwriter's padding.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		out = append(out, strings.Join(strings.Fields(l), " "))
	}
	return out
}

func assertLines(t *testing.T, got string, want []string) {
	t.Helper()
	g := lines(got)
	if strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Errorf("output:\n%s\nwant (spaces collapsed):\n%s", got, strings.Join(want, "\n"))
	}
}

func TestWriteJobTable(t *testing.T) {
	rows := []api.JobRow{
		{Name: "fit-a-line", State: api.StateRunning, Pass: 3, Passes: 30, Trainers: 2, Pservers: 2, Loss: ptr(23.91), Created: testNow.Add(-90 * time.Second)},
		{Name: "mnist", State: api.StatePending, Pass: 0, Passes: 5, Trainers: 4, Pservers: 1, Created: testNow.Add(-3 * time.Hour)},
		{Name: "old", State: api.StateSucceeded, Pass: 10, Passes: 10, Trainers: 1, Pservers: 1, Loss: ptr(123456.7), Age: "12d"},
	}
	var b bytes.Buffer
	if err := WriteJobTable(&b, rows, testNow); err != nil {
		t.Fatal(err)
	}
	assertLines(t, b.String(), []string{
		"NAME STATE PASS TRAINERS PSERVERS LOSS AGE",
		"fit-a-line RUNNING 3/30 2 2 23.91 90s",
		"mnist PENDING 0/5 4 1 - 3h",
		"old SUCCEEDED 10/10 1 1 123457 12d",
	})
	// Columns line up: every row's PASS cell starts where the header's does.
	raw := strings.Split(b.String(), "\n")
	col := strings.Index(raw[0], "PASS")
	for _, r := range raw[1:4] {
		if r[col-1] != ' ' || r[col] == ' ' {
			t.Errorf("PASS column not aligned at %d in %q", col, r)
		}
	}
}

func TestWriteWorkerTable(t *testing.T) {
	start := time.Date(2026, 11, 21, 10, 0, 5, 0, time.UTC)
	rows := []api.WorkerRow{
		{Name: "master", Node: "n1", PID: 4241, State: "running", Restarts: 0, Start: start},
		{Name: "trainer-0", Node: "n2", PID: 0, State: "pending", Restarts: 2, GPUs: []int{0, 3}},
	}
	var b bytes.Buffer
	if err := WriteWorkerTable(&b, rows, time.UTC); err != nil {
		t.Fatal(err)
	}
	assertLines(t, b.String(), []string{
		"NAME NODE PID STATE RESTARTS GPUS START",
		"master n1 4241 running 0 - 2026-11-21 10:00:05",
		"trainer-0 n2 - pending 2 0,3 -",
	})
}

func TestWriteNodeTable(t *testing.T) {
	rows := []api.NodeRow{
		{Name: "n1", Addr: "127.0.0.1:7164", State: "ready", CPU: 8, Memory: 16 << 30, Roles: []string{"master", "trainer-0"}},
		{Name: "n2", Addr: "10.0.0.2:7164", State: "down", CPU: 4, Memory: 1536 << 20, GPUs: 2,
			Devices: []api.GPUDevice{{Index: 1, Holder: "fit/trainer-0"}}},
	}
	var b bytes.Buffer
	if err := WriteNodeTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	assertLines(t, b.String(), []string{
		"NAME ADDR STATE CPU MEMORY GPUS ROLES",
		"n1 127.0.0.1:7164 ready 8 16Gi - master,trainer-0",
		"n2 10.0.0.2:7164 down 4 1.5Gi 1/2 -",
	})
}

func TestEmptyListingIsAnEmptyJSONArray(t *testing.T) {
	var b bytes.Buffer
	var rows []api.JobRow
	if err := WriteJSON(&b, NonNil(rows)); err != nil {
		t.Fatal(err)
	}
	if b.String() != "[]\n" {
		t.Errorf("empty listing = %q, want %q", b.String(), "[]\n")
	}
}

func TestWriteJobStatus(t *testing.T) {
	st := api.JobStatus{
		Name: "fit-a-line", State: api.StateFailed, Reason: "pserver-1 crashed 5 times", Mode: "sync",
		Pass: 3, Passes: 30, Step: 1234,
		Tasks:          api.TaskCounts{Todo: 4, Pending: 2, Done: 14, Failed: 1},
		SamplesApplied: []int64{404, 404, 404},
		Trainers:       []api.TrainerStatus{{ID: 0, Name: "trainer-0", Node: "n1", PID: 4242, State: "running"}},
		Pservers: []api.PserverStatus{{Index: 0, Name: "pserver-0", Node: "n1", PID: 4244, Addr: "127.0.0.1:40124", State: "running"},
			{Index: 1, Name: "pserver-1", Node: "n1", PID: 4243, Addr: "127.0.0.1:40123", State: "running", Restarts: 1, CheckpointStep: 1200, BudgetUsed: 1}},
		Master:        api.MasterStatus{Name: "master", Node: "n1", PID: 4241},
		RestartBudget: api.RestartBudget{Limit: 5, Window: "1m0s"},
		Metrics:       api.Metrics{TrainLoss: ptr(21.3), TestLoss: ptr(23.9)},
		ModelDir:      "/var/lib/gtrain/jobs/fit-a-line/model",
	}
	for i := range 12 {
		st.Events = append(st.Events, api.Event{Time: testNow.Add(time.Duration(i) * time.Second), What: "event " + string(rune('a'+i))})
	}
	var b bytes.Buffer
	if err := WriteJobStatus(&b, st, time.UTC); err != nil {
		t.Fatal(err)
	}
	out := strings.Join(lines(b.String()), "\n")
	for _, want := range []string{
		"Name: fit-a-line", "State: FAILED", "Reason: pserver-1 crashed 5 times", "Pass: 3/30", "Step: 1234",
		"Tasks: todo 4 pending 2 done 14 failed 1", "Samples applied: exact, 404 per pass × 3 passes",
		"Metrics: train_loss 21.3 test_loss 23.9", "Model dir: /var/lib/gtrain/jobs/fit-a-line/model",
		"Master: master on n1, pid 4241, 0 restarts",
		"Crash budget: 5 crashes per 1m0s per role; used: pserver-1 1",
		"0 trainer-0 n1 4242 running 0",
		"1 pserver-1 n1 4243 127.0.0.1:40123 running 1 1200",
		"0 pserver-0 n1 4244 127.0.0.1:40124 running 0 -", // no checkpoint yet: not "0"
		"Events (newest 10 of 12):", "2026-11-21 12:00:11 event l",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status view lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(out, "event a") || strings.Contains(out, "event b") {
		t.Errorf("status view shows more than the newest %d events:\n%s", eventsShown, b.String())
	}
}

func TestWriteJobStatusWarnings(t *testing.T) {
	st := api.JobStatus{Name: "j", State: api.StateRunning}
	var b bytes.Buffer
	if err := WriteJobStatus(&b, st, time.UTC); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Warnings") {
		t.Errorf("a job without warnings shows a Warnings line:\n%s", b.String())
	}
	st.Warnings = []string{"pserver-1 cannot write checkpoint step 300 to /c: disk full", "second"}
	b.Reset()
	if err := WriteJobStatus(&b, st, time.UTC); err != nil {
		t.Fatal(err)
	}
	out := strings.Join(lines(b.String()), "\n")
	if !strings.Contains(out, "Warnings: pserver-1 cannot write checkpoint step 300 to /c: disk full\nsecond") {
		t.Errorf("status view does not list the warnings:\n%s", b.String())
	}
}

func TestFormatters(t *testing.T) {
	floats := []struct {
		v    *float64
		want string
	}{{nil, "-"}, {ptr(21.3), "21.3"}, {ptr(0.0123456), "0.01235"}, {ptr(1234.56), "1235"}, {ptr(98765.4), "98765"}}
	for _, f := range floats {
		if got := FormatFloat(f.v); got != f.want {
			t.Errorf("formatFloat(%v) = %q, want %q", f.v, got, f.want)
		}
	}
	ages := []struct {
		d    time.Duration
		want string
	}{{5 * time.Second, "5s"}, {119 * time.Second, "119s"}, {7 * time.Minute, "7m"}, {5 * time.Hour, "5h"}, {73 * time.Hour, "3d"}, {-time.Second, "0s"}}
	for _, a := range ages {
		if got := formatAge(testNow.Add(-a.d), testNow); got != a.want {
			t.Errorf("formatAge(%v) = %q, want %q", a.d, got, a.want)
		}
	}
	if got := formatAge(time.Time{}, testNow); got != "-" {
		t.Errorf("formatAge(zero) = %q, want -", got)
	}
	sizes := []struct {
		n    int64
		want string
	}{{0, "0"}, {1023, "1023"}, {1024, "1Ki"}, {512 << 20, "512Mi"}, {1536 << 20, "1.5Gi"}}
	for _, s := range sizes {
		if got := formatBytes(s.n); got != s.want {
			t.Errorf("formatBytes(%d) = %q, want %q", s.n, got, s.want)
		}
	}
}

// testNow is the tests' "now": ages and times print from it.
var testNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
