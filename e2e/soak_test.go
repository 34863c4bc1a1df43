package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/netcluster"
	"github.com/gtrain/gtrain/jobspec"
)

// soakDefault bounds the soak in `make test`; GTRAIN_SOAK=30m runs longer.
const soakDefault = 60 * time.Second

// TestSoak runs sync jobs across three hosts, one after another, while a
// random schedule (its seed is logged; GTRAIN_SOAK_SEED replays it)
// SIGKILLs roles, SIGSTOPs them for a moment or past their lease, and
// pauses every etcd member. Every job SUCCEEDS with each record applied
// once and the uninterrupted run's model.
func TestSoak(t *testing.T) {
	t.Parallel() // with the 5-minute etcd outage, whose cluster sits idle meanwhile
	d := soakDefault
	if v := os.Getenv("GTRAIN_SOAK"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("GTRAIN_SOAK=%q: %v", v, err)
		}
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("GTRAIN_SOAK_SEED"); v != "" {
		fmt.Sscan(v, &seed)
	}
	t.Logf("soak for %s, GTRAIN_SOAK_SEED=%d", d, seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	hc := startHostCluster(t, netcluster.EtcdPlain)
	ref := hc.referenceSums(t)
	deadline := time.Now().Add(d)
	for i := 0; i == 0 || time.Now().Before(deadline); i++ {
		name := fmt.Sprintf("soak-%d", i)
		spec := hc.clusterJob(name)
		spec.Restarts = jobspec.RestartsSpec{Limit: 40, Window: "60s"}
		hc.submitSpec(t, 0, spec)
		hc.chaosUntilEnd(t, name, rng, deadline)
		st := waitJob(t, hc.on(0), name, "the job to finish", 240*time.Second, succeeded)
		assertExact(t, st)
		assertSameModel(t, st, ref)
		if t.Failed() {
			logEvents(t, st)
			return
		}
	}
}

// chaosUntilEnd does one random harm every 2-6 s until the job ends or
// the deadline passes.
func (hc *hostCluster) chaosUntilEnd(t *testing.T, job string, rng *rand.Rand, deadline time.Time) {
	t.Helper()
	for time.Now().Before(deadline) {
		time.Sleep(2*time.Second + time.Duration(rng.Int64N(int64(4*time.Second))))
		var st api.JobStatus
		if _, _, code := hc.gctl(t, 0, "job", "status", job); code != 0 {
			continue // the API may be busy re-registering after an etcd pause
		}
		jsonOf(t, hc.on(0), &st, "job", "status", job)
		if api.Terminal(st.State) {
			return
		}
		hc.harm(t, st, rng)
	}
}

// harm picks one: SIGKILL a role, SIGSTOP one briefly or past its lease,
// or pause etcd.
func (hc *hostCluster) harm(t *testing.T, st api.JobStatus, rng *rand.Rand) {
	t.Helper()
	if rng.IntN(6) == 0 {
		hc.pauseEtcd(t, time.Duration(2+rng.IntN(9))*time.Second, st.Step)
		return
	}
	name, pid := randomRole(st, rng)
	if pid <= 0 {
		return
	}
	if rng.IntN(2) == 0 {
		t.Logf("SIGKILL %s (pid %d) at step %d", name, pid, st.Step)
		_ = syscall.Kill(pid, syscall.SIGKILL)
		return
	}
	pause := time.Duration(500+rng.IntN(7500)) * time.Millisecond
	t.Logf("SIGSTOP %s (pid %d) for %s at step %d", name, pid, pause, st.Step)
	_ = syscall.Kill(pid, syscall.SIGSTOP)
	time.Sleep(pause)
	_ = syscall.Kill(pid, syscall.SIGCONT)
}

func randomRole(st api.JobStatus, rng *rand.Rand) (string, int) {
	names := []string{st.Master.Name}
	pids := []int{st.Master.PID}
	for _, p := range st.Pservers {
		names, pids = append(names, p.Name), append(pids, p.PID)
	}
	for _, tr := range st.Trainers {
		names, pids = append(names, tr.Name), append(pids, tr.PID)
	}
	i := rng.IntN(len(pids))
	return names[i], pids[i]
}
