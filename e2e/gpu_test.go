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

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/internal/testing/etcdtest"
	"github.com/gtrain/gtrain/internal/testing/wait"
	"github.com/gtrain/gtrain/jobspec"
)

// TestGPUPlacement: two agents offering 2 (fake) GPUs each. A job of three
// 1-GPU trainers runs them on distinct (node, device) pairs, and each
// trainer's model program sees its device alone in CUDA_VISIBLE_DEVICES
// (read from its /proc environ: a sandboxed program can write nothing the
// test could read); a
// second job of two more 1-GPU trainers waits PENDING with "no free GPU".
// The node holding two of the trainers is crashed (its agent SIGKILLed):
// one of them is placed anew on the other node's free device, its program
// pinned to it, and the other waits for a GPU.
func TestGPUPlacement(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes, SIGKILL")
	}
	work := t.TempDir()
	endpoint := etcdtest.Start(t).Endpoint
	agents := map[string]*e2erig.Agent{}
	for _, n := range []string{"n1", "n2"} {
		agents[n] = startSizedAgent(t, n, filepath.Join(work, n), endpoint, "4", "--gpus", "2")
	}
	programWorkspace(t, agents["n1"], work)
	gpuJob := func(name string, trainers int) jobspec.Spec {
		s := programJob(name, "")
		s.Trainers, s.Pservers, s.Passes = trainers, 1, 100 // it runs until the test ends
		s.Resources.Trainer = jobspec.Resource{CPU: 0.5, Memory: s.Resources.Trainer.Memory, GPU: 1}
		s.Checkpoint.Dir = filepath.Join(work, "ckpt-"+name)
		s.Env = map[string]string{gpuProgramMark: "1"}
		return s
	}
	a := agents["n1"]
	e2erig.StartDetached(t, a, gpuJob("gpu", 3))
	rows := waitPinned(t, a, "the 3 trainers to run pinned to their GPUs", 3)
	pairs := devicePairs(rows)
	if len(pairs) != 3 || len(slices.Compact(slices.Clone(pairs))) != 3 {
		t.Fatalf("trainers on (node, device) pairs %v, want 3 distinct", pairs)
	}
	e2erig.StartDetached(t, a, gpuJob("more", 2))
	st := e2erig.WaitJob(t, a, "more", "the second job to wait for GPUs", 30*time.Second, func(st api.JobStatus) bool {
		return st.State == api.StatePending && strings.Contains(st.Reason, "no free GPU")
	})
	t.Logf("pending: %s", st.Reason)
	var nodes []api.NodeRow
	e2erig.JSONOf(t, a, &nodes, "node", "list")
	for _, n := range nodes {
		if n.GPUs != 2 || n.GPUsUsed != len(n.Devices) {
			t.Errorf("node %s: gpus %d, used %d, devices %+v", n.Name, n.GPUs, n.GPUsUsed, n.Devices)
		}
	}

	victim, survivor := "n1", "n2"
	if countOn(rows, "n2") == 2 {
		victim, survivor = "n2", "n1"
	}
	a = agents[survivor]
	t.Logf("SIGKILL the agent of %s, which runs 2 trainers; %s has 1 GPU free", victim, survivor)
	if err := agents[victim].Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-agents[victim].Exited
	waitNodeState(t, a, victim, api.NodeDown, 10*time.Second)
	moved := waitPinned(t, a, "a trainer of the dead node to run pinned on "+survivor, 2)
	if got := devicePairs(moved); !slices.Equal(got, []string{survivor + "/0", survivor + "/1"}) {
		t.Errorf("after the crash trainers run on %v, want both GPUs of %s", got, survivor)
	}
	st = e2erig.JobStatus(t, a, "gpu")
	if !strings.Contains(st.Reason, "no free GPU for trainer-") {
		t.Errorf("the trainer left without a GPU: reason %q, want no free GPU", st.Reason)
	}
}

// gpuProgramMark is in the environment of the test's model programs: it
// tells them among a trainer's descendants in /proc.
const gpuProgramMark = "E2E_GPU_PROGRAM"

// waitPinned waits until want trainers of job gpu run, each with one GPU,
// and the model program each started has that GPU in its
// CUDA_VISIBLE_DEVICES; it returns those trainers.
func waitPinned(t *testing.T, a *e2erig.Agent, what string, want int) []api.WorkerRow {
	t.Helper()
	var pinned []api.WorkerRow
	wait.Eventually(t, 90*time.Second, what, func() (bool, string) {
		var rows []api.WorkerRow
		out, _, code := a.Gctl(t, "job", "workers", "gpu", "-o", "json")
		if code != 0 || e2erig.JSONUnmarshal(out, &rows) != nil {
			return false, out
		}
		pinned = pinned[:0]
		for _, r := range rows {
			role, _, _ := jobspec.ParseWorker(r.Name)
			if role != jobspec.RoleTrainer || r.State != api.WorkerRunning || len(r.GPUs) != 1 {
				continue
			}
			if seen := programDevices(r.PID); seen != strconv.Itoa(r.GPUs[0]) {
				return false, fmt.Sprintf("%s (pid %d) on %s has GPU %v; its program saw %q", r.Name, r.PID, r.Node, r.GPUs, seen)
			}
			pinned = append(pinned, r)
		}
		return len(pinned) == want, out
	})
	return pinned
}

// programDevices is the CUDA_VISIBLE_DEVICES of the model program the
// process pid started (a descendant whose environment holds
// gpuProgramMark), read as root from /proc; "" while none runs.
func programDevices(pid int) string {
	for _, p := range descendants(pid) {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p))
		if err != nil {
			continue
		}
		vars := strings.Split(string(env), "\x00")
		if !slices.Contains(vars, gpuProgramMark+"=1") {
			continue
		}
		for _, v := range vars {
			if d, ok := strings.CutPrefix(v, "CUDA_VISIBLE_DEVICES="); ok {
				return d
			}
		}
		return "unset"
	}
	return ""
}

// descendants lists the processes below pid (children first), from the
// parent pid in each /proc/PID/stat.
func descendants(pid int) []int {
	children := map[int][]int{}
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut after its ')'.
		i := strings.LastIndexByte(string(b), ')')
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		p, err1 := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		pp, err2 := strconv.Atoi(f[1])
		if err1 == nil && err2 == nil {
			children[pp] = append(children[pp], p)
		}
	}
	var out []int
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return out
}

// devicePairs is the "node/device" of each row, sorted.
func devicePairs(rows []api.WorkerRow) []string {
	var out []string
	for _, r := range rows {
		for _, d := range r.GPUs {
			out = append(out, fmt.Sprintf("%s/%d", r.Node, d))
		}
	}
	slices.Sort(out)
	return out
}

func countOn(rows []api.WorkerRow, node string) int {
	n := 0
	for _, r := range rows {
		if r.Node == node {
			n++
		}
	}
	return n
}
