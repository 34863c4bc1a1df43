package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/cpuaffinity"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
)

// TestThreadsSameModel: the same sync job with trainers of cpu: 1 and of
// cpu: 2 ends with the same model, bit for bit (a micro-batch's gradient does
// not depend on the threads computing it), and the cpu: 2 trainers did
// compute on 2 threads. Some of their micro-batches were computed early
// (trainer/early.go: started before the master's answer named them), so
// the same model also says the early ones computed what was named. The
// same job on an agent with --exclusive-cpus, one trainer computing on a
// CPU of its own, ends with the same model too.
func TestThreadsSameModel(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes")
	}
	work := t.TempDir()
	e2erig.Housing(t, filepath.Join(work, "data"))
	// Placement books cores: two trainers of cpu: 2 need more than 2 here.
	a := e2erig.StartAgentWith(t, filepath.Join(work, "agent"), "--cpu", "8")
	sums := map[int]string{}
	early := 0
	for _, cpu := range []int{1, 2} {
		name := fmt.Sprintf("threads-%d", cpu)
		if _, errs, code := a.Gctl(t, "job", "start", "-f", e2erig.WriteSpec(t, work, threadsJob(name, cpu))); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errs)
		}
		log, err := os.ReadFile(filepath.Join(a.DataDir, "jobs", name, "log", "trainer-0.log"))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("threads=%d", cpu); !strings.Contains(string(log), want) {
			t.Fatalf("%s: trainer-0's log does not say %s:\n%s", name, want, log)
		}
		early += earlyMicroBatches(t, filepath.Join(a.DataDir, "jobs", name, "log"))
		sums[cpu] = e2erig.ManifestSums(t, e2erig.JobStatus(t, a, name).ModelDir)
	}
	if sums[1] != sums[2] {
		t.Fatalf("the model depends on the trainers' threads:\ncpu 1: %s\ncpu 2: %s", sums[1], sums[2])
	}
	// One trainer of one micro-batch a step, whose every push completes its
	// step: it computes micro-batches early far more surely than two
	// trainers, whose reports often come back first (the check above once
	// found none in CI with them alone).
	oneSums, oneEarly := oneMicroBatchJob(t, work, a, "ahead-shared", false)
	if early+oneEarly == 0 {
		t.Fatal("no trainer computed a micro-batch early: the test does not cover them")
	}
	got, exclusive := exclusiveCPUsModel(t, work)
	if exclusive == nil {
		return
	}
	if got != sums[1] {
		t.Fatalf("the model depends on the trainers' CPUs:\nexclusive: %s\nshared: %s", got, sums[1])
	}
	// The same job on the agent with --exclusive-cpus, whose trainer starts
	// each next micro-batch before its parameters are back
	// (trainer/ahead.go): the same model.
	if aheadSums, _ := oneMicroBatchJob(t, work, exclusive, "ahead-exclusive", true); aheadSums != oneSums {
		t.Fatalf("starting micro-batches ahead of their parameters changed the model:\nahead: %s\nnot: %s", aheadSums, oneSums)
	}
}

// oneMicroBatchJob trains the cpu: 1 job with one trainer and one
// micro-batch a step on agent a and returns its model's sums and its early
// micro-batches, having checked that some started ahead of their
// parameters (trainer/ahead.go) on an agent with --exclusive-cpus
// (exclusive) only.
func oneMicroBatchJob(t *testing.T, work string, a *e2erig.Agent, name string, exclusive bool) (string, int) {
	spec := threadsJob(name, 1)
	spec.Trainers, spec.BatchSize = 1, spec.GlobalBatch
	if _, errs, code := a.Gctl(t, "job", "start", "-f", e2erig.WriteSpec(t, work, spec)); code != 0 {
		t.Fatalf("%s: exit %d: %s", name, code, errs)
	}
	logDir := filepath.Join(a.DataDir, "jobs", name, "log")
	if ahead := trainingDoneCount(t, logDir, "early_ahead"); (ahead > 0) != exclusive {
		t.Fatalf("%s: %d micro-batches started ahead of their parameters; want some only on the agent with --exclusive-cpus", name, ahead)
	}
	return e2erig.ManifestSums(t, e2erig.JobStatus(t, a, name).ModelDir), earlyMicroBatches(t, logDir)
}

// exclusiveCPUsModel runs the cpu: 1 job of TestThreadsSameModel on an
// agent with --exclusive-cpus, with one trainer, and returns its model's
// sums and the agent (nil on a machine of one CPU), having checked that the trainer computed on the highest CPU while
// no thread of the pserver or the master ran there once it started.
func exclusiveCPUsModel(t *testing.T, work string) (string, *e2erig.Agent) {
	pool, err := cpuaffinity.Allowed()
	if err != nil {
		t.Fatal(err)
	}
	if len(pool) < 2 {
		t.Logf("exclusive CPUs not checked: this machine has %v only", pool)
		return "", nil
	}
	own := pool[len(pool)-1]
	a := e2erig.StartAgentWith(t, filepath.Join(work, "agent-exclusive"), "--cpu", "8", "--exclusive-cpus")
	const name = "threads-exclusive"
	stop, seen := make(chan struct{}), make(chan watched, 1)
	go func() { seen <- watchCPUs(name, own, stop) }()
	// One trainer computing both micro-batches of each step: the same model
	// as two (the bit-identical promise), and all of its job's trainers
	// here fit with a CPU left shared.
	spec := threadsJob(name, 1)
	spec.Trainers = 1
	_, errs, code := a.Gctl(t, "job", "start", "-f", e2erig.WriteSpec(t, work, spec))
	close(stop)
	w := <-seen
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", name, code, errs)
	}
	log, err := os.ReadFile(filepath.Join(a.DataDir, "jobs", name, "log", "trainer-0.log"))
	if err != nil {
		t.Fatal(err)
	}
	said := slices.ContainsFunc(strings.Split(string(log), "\n"), func(l string) bool {
		return strings.Contains(l, `msg="computing on CPUs of its own"`) && strings.HasSuffix(l, fmt.Sprintf(" cpus=%d", own))
	})
	if !said {
		t.Fatalf("trainer-0's log does not say it computed on CPU %d:\n%s", own, log)
	}
	if len(w.trespass) > 0 {
		t.Fatalf("roles ran on the trainer's CPU %d: %s", own, strings.Join(w.trespass, "; "))
	}
	if w.readings == 0 {
		t.Fatal("no reading of the pserver's and master's CPUs while the trainer ran with its own: nothing was checked")
	}
	return e2erig.ManifestSums(t, e2erig.JobStatus(t, a, name).ModelDir), a
}

// watchCPUs reads, until stop, the CPUs of every thread of job's pservers
// and master while a trainer runs with CPUs of its own (--compute-cpus),
// and returns those that may run on cpu: not one may (a pserver started
// before the trainer is moved off it before the trainer starts). Once the
// trainer exits, its CPUs are shared again: a reading counts only if the
// trainer still ran after it.
// watched is what watchCPUs saw: its readings of both the pserver and the
// master while the trainer ran, and the threads found on the trainer's CPU.
type watched struct {
	readings int
	trespass []string
}

func watchCPUs(job string, cpu int, stop <-chan struct{}) watched {
	var w watched
	for len(w.trespass) < 10 {
		select {
		case <-stop:
			return w
		case <-time.After(20 * time.Millisecond):
		}
		roles := jobProcesses(job)
		trainer := slices.IndexFunc(roles, func(p jobProcess) bool {
			return p.role == "trainer" && slices.Contains(p.args, "--compute-cpus")
		})
		if trainer < 0 {
			continue
		}
		var seen []string
		read := map[string]bool{}
		for _, p := range roles {
			threads, _ := cpuaffinity.ThreadCPUs(p.pid)
			for tid, cpus := range threads {
				read[p.role] = true
				if p.role != "trainer" && slices.Contains(cpus, cpu) {
					seen = append(seen, fmt.Sprintf("%s thread %d on %v", p.role, tid, cpus))
				}
			}
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d/task", roles[trainer].pid)); err == nil {
			w.trespass = append(w.trespass, seen...)
			if read["pserver"] && read["master"] {
				w.readings++
			}
		}
	}
	return w
}

type jobProcess struct {
	pid  int
	role string
	args []string
}

// jobProcesses is the gtraind processes whose command line names job.
func jobProcesses(job string) []jobProcess {
	var out []jobProcess
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range procs {
		b, err := os.ReadFile(f)
		args := strings.Split(string(b), "\x00")
		if err != nil || len(args) < 2 || !slices.Contains(args, job) || !strings.HasSuffix(args[0], "gtraind") {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		out = append(out, jobProcess{pid: pid, role: args[1], args: args})
	}
	return out
}

// earlyMicroBatches sums the early micro-batches the trainers of a job's
// log directory pushed, as their "training done" lines say.
func earlyMicroBatches(t *testing.T, logDir string) int {
	return trainingDoneCount(t, logDir, "early_micro_batches")
}

// trainingDoneCount sums field of the trainers' "training done" log lines
// in logDir.
func trainingDoneCount(t *testing.T, logDir, field string) int {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(logDir, "trainer-*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no trainer logs in %s: %v", logDir, err)
	}
	sum := 0
	for _, f := range logs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			var n int
			if i := strings.Index(l, " "+field+"="); i >= 0 && strings.Contains(l, `msg="training done"`) {
				if _, err := fmt.Sscanf(l[i:], " "+field+"=%d", &n); err != nil {
					t.Fatalf("%s: %q: %v", f, l, err)
				}
				sum += n
			}
		}
	}
	return sum
}
