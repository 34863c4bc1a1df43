package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/internal/testing/wait"
	"github.com/gtrain/gtrain/jobspec"

	"github.com/gtrain/gtrain/api"
)

// TestObserveAJob is what an operator watches while a job trains, on a
// real agent with --metrics-addr: `curl /metrics` twice shows the job's
// counters moving, `gctl job events -f -o json` streams a trainer's
// restart as it happens and ends with the job, and afterwards the status
// has one history entry per pass, `job plot` draws it and `job start`
// summarised samples_applied in one line.
func TestObserveAJob(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	work := t.TempDir()
	p := e2erig.FreePorts(t, 5)
	metricsAddr := p[0]
	a := &e2erig.Agent{DataDir: filepath.Join(work, "agent"), API: p[1], Etcd: p[2], Log: &e2erig.LogBuffer{}}
	a.Launch(t, "agent", "--dev", "--data-dir", a.DataDir, "--node-name", "e2e-node", "--api-addr", a.API,
		"--gossip-addr", p[3], "--etcd-client-addr", a.Etcd, "--etcd-peer-addr", p[4],
		"--metrics-addr", metricsAddr)
	convertHousingWithGctl(t, a, work)
	// Long enough to scrape twice a second apart, see a checkpoint pause
	// and a trainer's restart while it trains: about 10 s (a pass of 11
	// steps takes ~25 ms; 40 passes ended within the first second).
	const passes = 400
	spec := e2erig.WriteSpec(t, work, fitALineJob("obs", jobspec.ModeSync, passes, "data"))

	var start struct {
		out, errs string
		code      int
	}
	started := make(chan struct{})
	go func() {
		defer close(started)
		start.out, start.errs, start.code = a.Gctl(t, "job", "start", "-f", spec)
	}()
	wait.Eventually(t, 30*time.Second, "the job to run", func() (bool, string) {
		out, _, code := a.Gctl(t, "job", "status", "obs", "-o", "json")
		return code == 0 && strings.Contains(out, `"state": "RUNNING"`), out
	})
	events := followEvents(t, a, "obs")

	steps := func() float64 { return metricValue(t, metricsAddr, "gtrain_trainer_steps_total", `worker="trainer-0"`) }
	var first float64
	wait.Eventually(t, 30*time.Second, "trainer-0 to count steps", func() (bool, string) {
		first = steps()
		return first > 0, fmt.Sprint(first)
	})
	time.Sleep(time.Second)
	if second := steps(); second <= first {
		t.Errorf("gtrain_trainer_steps_total of trainer-0: %v then %v a second later: not moving", first, second)
	}
	body := scrape(t, metricsAddr)
	for _, want := range []string{
		`gtrain_trainer_push_seconds_count{job="obs",role="trainer",worker="trainer-1"}`,
		`gtrain_trainer_records_total{job="obs",role="trainer",worker="trainer-0"}`,
		`gtrain_pserver_step{job="obs",role="pserver",worker="pserver-1"}`,
		`gtrain_master_rollbacks_total{job="obs",role="master",worker="master"}`,
		`gtrain_worker_up{job="obs",role="trainer",worker="trainer-0"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// Each micro-batch's computation is timed, and takes time.
	if n, sum := metricValue(t, metricsAddr, "gtrain_trainer_compute_seconds_count", `worker="trainer-0"`),
		metricValue(t, metricsAddr, "gtrain_trainer_compute_seconds_sum", `worker="trainer-0"`); n < 1 || sum <= 0 {
		t.Errorf("gtrain_trainer_compute_seconds of trainer-0: count %v, sum %v; want micro-batches timed", n, sum)
	}

	// Sync pservers checkpoint at every pass end: the pause is timed.
	wait.Eventually(t, 30*time.Second, "a timed checkpoint pause", func() (bool, string) {
		n := metricValue(t, metricsAddr, "gtrain_pserver_checkpoint_pause_seconds_count", `worker="pserver-0"`)
		return n > 0, fmt.Sprint(n)
	})

	killWorker(t, a, "obs", "trainer-1")
	wait.Eventually(t, 30*time.Second, "the restart to be counted", func() (bool, string) {
		n := metricValue(t, metricsAddr, "gtrain_worker_restarts_total", `worker="trainer-1"`)
		return n == 1, fmt.Sprint(n)
	})
	select {
	case <-started:
	case <-time.After(90 * time.Second):
		t.Fatal("job start did not return within 90s")
	}
	if start.code != 0 || !strings.Contains(start.out, fmt.Sprintf("samples applied: exact, 404 per pass × %d passes", passes)) {
		t.Errorf("job start: exit %d, want 0 and the one-line samples summary:\n%s%s", start.code, start.out, start.errs)
	}
	assertEventsStreamed(t, events)
	assertHistoryAndPlot(t, a, work, passes)
}

// eventLines is the output of a `gctl job events -f -o json` process.
type eventLines struct {
	mu    sync.Mutex
	lines []timedLine
	done  chan error
}

type timedLine struct {
	at   time.Time
	line string
}

// followEvents starts `gctl job events NAME -f -o json` and records when
// each line arrives.
func followEvents(t *testing.T, a *e2erig.Agent, job string) *eventLines {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, filepath.Join(e2erig.BinDir, "gctl"), "--addr", a.API, "job", "events", job, "-f", "-o", "json")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ev := &eventLines{done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			ev.mu.Lock()
			ev.lines = append(ev.lines, timedLine{at: time.Now(), line: sc.Text()})
			ev.mu.Unlock()
		}
		ev.done <- cmd.Wait()
	}()
	return ev
}

// assertEventsStreamed: the follower ended by itself with the job (exit
// 0), every line is an event in JSON, and the trainer's restart arrived
// while the job still ran, before "training finished".
func assertEventsStreamed(t *testing.T, ev *eventLines) {
	t.Helper()
	select {
	case err := <-ev.done:
		if err != nil {
			t.Errorf("job events -f: %v, want exit 0 once the job ended", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("job events -f still running 30s after the job ended")
	}
	var restartAt, finishedAt time.Time
	for _, l := range ev.lines {
		var e api.Event
		if err := json.Unmarshal([]byte(l.line), &e); err != nil || e.What == "" || e.Time.IsZero() {
			t.Errorf("events line %q is not a JSON event: %v", l.line, err)
			continue
		}
		switch {
		case strings.Contains(e.What, "trainer-1") && strings.Contains(e.What, "restarting"):
			restartAt = l.at
		case e.What == "training finished":
			finishedAt = l.at
		}
	}
	if restartAt.IsZero() || finishedAt.IsZero() || !restartAt.Before(finishedAt) {
		t.Errorf("events -f: restart at %v, training finished at %v; want both, the restart streamed first:\n%v", restartAt, finishedAt, ev.lines)
	}
}

// assertHistoryAndPlot: one history entry per pass with measured losses,
// times and rates; `job plot` prints a chart and writes a PNG.
func assertHistoryAndPlot(t *testing.T, a *e2erig.Agent, work string, passes int) {
	t.Helper()
	var st api.JobStatus
	e2erig.JSONOf(t, a, &st, "job", "status", "obs")
	if len(st.History) != passes {
		t.Fatalf("history has %d entries, want %d", len(st.History), passes)
	}
	for i, h := range st.History {
		if h.Pass != i || h.TrainLoss == nil || h.TestLoss == nil || h.TestAccuracy != nil || h.Seconds <= 0 || h.RecordsPerS <= 0 || h.Samples != 404 {
			t.Errorf("history entry %d: %+v", i, h)
		}
	}
	if last := st.History[passes-1]; *last.TestLoss != *st.Metrics.TestLoss {
		t.Errorf("last history test loss %v, status metrics %v", *last.TestLoss, *st.Metrics.TestLoss)
	}
	out, errs, code := a.Gctl(t, "job", "plot", "obs")
	if code != 0 || !strings.Contains(out, "obs: loss per pass") || !strings.Contains(out, "* train loss") {
		t.Errorf("job plot: exit %d:\n%s%s", code, out, errs)
	}
	png := filepath.Join(work, "loss.png")
	if _, errs, code := a.Gctl(t, "job", "plot", "obs", "--out", png); code != 0 {
		t.Errorf("job plot --out: exit %d: %s", code, errs)
	}
	if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("job plot --out wrote no PNG: %v", err)
	}
}

// scrape GETs the agent's /metrics as `curl` does.
func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s %v", resp.Status, err)
	}
	return string(b)
}

// metricValue is the value of the sample of name whose labels contain
// label, -1 when there is none.
func metricValue(t *testing.T, addr, name, label string) float64 {
	t.Helper()
	for line := range strings.SplitSeq(scrape(t, addr), "\n") {
		if !strings.HasPrefix(line, name+"{") || !strings.Contains(line, label) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		return v
	}
	return -1
}

// killWorker SIGKILLs a running worker of job.
func killWorker(t *testing.T, a *e2erig.Agent, job, worker string) {
	t.Helper()
	var rows []api.WorkerRow
	e2erig.JSONOf(t, a, &rows, "job", "workers", job)
	for _, w := range rows {
		if w.Name == worker && w.PID > 0 {
			if err := syscall.Kill(w.PID, syscall.SIGKILL); err != nil {
				t.Fatalf("kill %s: %v", worker, err)
			}
			return
		}
	}
	t.Fatalf("%s has no running process: %+v", worker, rows)
}
