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

// gpuSite is a sitecustomize.py that makes every model program write its
// CUDA_VISIBLE_DEVICES into GPU_MARKS/<parent pid>-<pid>: the parent is
// the role process that started it, so the test knows whose it is.
const gpuSite = `import os
d = os.environ.get('GPU_MARKS')
if d:
    with open(os.path.join(d, '%d-%d' % (os.getppid(), os.getpid())), 'w') as f:
        f.write(os.environ.get('CUDA_VISIBLE_DEVICES', 'unset'))
`

// TestGPUPlacement: two agents offering 2 (fake) GPUs each. A job of three
// 1-GPU trainers runs them on distinct (node, device) pairs, and each
// trainer's model program sees its device alone in CUDA_VISIBLE_DEVICES; a
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
	lib, marks := filepath.Join(work, "pylib"), filepath.Join(work, "marks")
	for _, d := range []string{lib, marks} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(lib, "sitecustomize.py"), []byte(gpuSite), 0o644); err != nil {
		t.Fatal(err)
	}
	gpuJob := func(name string, trainers int) jobspec.Spec {
		s := programJob(name, "")
		s.Trainers, s.Pservers, s.Passes = trainers, 1, 100 // it runs until the test ends
		s.Resources.Trainer = jobspec.Resource{CPU: 0.5, GPU: 1}
		s.Checkpoint.Dir = filepath.Join(work, "ckpt-"+name)
		s.Env = map[string]string{"PYTHONPATH": lib, "GPU_MARKS": marks}
		return s
	}
	a := agents["n1"]
	e2erig.StartDetached(t, a, gpuJob("gpu", 3))
	rows := waitPinned(t, a, marks, "the 3 trainers to run pinned to their GPUs", 3)
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
	moved := waitPinned(t, a, marks, "a trainer of the dead node to run pinned on "+survivor, 2)
	if got := devicePairs(moved); !slices.Equal(got, []string{survivor + "/0", survivor + "/1"}) {
		t.Errorf("after the crash trainers run on %v, want both GPUs of %s", got, survivor)
	}
	st = e2erig.JobStatus(t, a, "gpu")
	if !strings.Contains(st.Reason, "no free GPU for trainer-") {
		t.Errorf("the trainer left without a GPU: reason %q, want no free GPU", st.Reason)
	}
}

// waitPinned waits until want trainers of job gpu run, each with one GPU,
// and the model program each started says that GPU in its
// CUDA_VISIBLE_DEVICES (its mark under marks); it returns those trainers.
func waitPinned(t *testing.T, a *e2erig.Agent, marks, what string, want int) []api.WorkerRow {
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
			if seen := markOf(marks, r.PID); seen != strconv.Itoa(r.GPUs[0]) {
				return false, fmt.Sprintf("%s (pid %d) on %s has GPU %v; its program saw %q", r.Name, r.PID, r.Node, r.GPUs, seen)
			}
			pinned = append(pinned, r)
		}
		return len(pinned) == want, out
	})
	return pinned
}

// markOf is the CUDA_VISIBLE_DEVICES a program started by pid wrote ("":
// none wrote yet).
func markOf(marks string, pid int) string {
	found, _ := filepath.Glob(filepath.Join(marks, strconv.Itoa(pid)+"-*"))
	if len(found) == 0 {
		return ""
	}
	b, _ := os.ReadFile(found[0])
	return string(b)
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
