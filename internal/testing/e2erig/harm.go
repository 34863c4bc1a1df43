package e2erig

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/wait"
)

// StopPastLease SIGSTOPs pid for pause (longer than its lease), SIGCONTs
// it and fails the test unless it exits by itself within grace: a process
// whose authority lapsed must not go on.
func StopPastLease(t *testing.T, what string, pid int, pause, grace time.Duration) {
	t.Helper()
	_ = syscall.Kill(pid, syscall.SIGSTOP)
	time.Sleep(pause)
	_ = syscall.Kill(pid, syscall.SIGCONT)
	wait.Eventually(t, grace, fmt.Sprintf("%s (pid %d) to exit once its lease lapsed", what, pid), func() (bool, string) {
		return !ProcessAlive(pid), "still running"
	})
}

// ProcessAlive says whether pid still runs (or is a zombie not yet
// reaped).
func ProcessAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// ChaosUntilEnd does one random harm every 2-6 s until the job ends or
// the deadline passes.
func (hc *HostCluster) ChaosUntilEnd(t *testing.T, job string, rng *rand.Rand, deadline time.Time) {
	t.Helper()
	for time.Now().Before(deadline) {
		time.Sleep(2*time.Second + time.Duration(rng.Int64N(int64(4*time.Second))))
		var st api.JobStatus
		if _, _, code := hc.GctlOn(t, 0, "job", "status", job); code != 0 {
			continue // the API may be busy re-registering after an etcd pause
		}
		JSONOf(t, hc.On(0), &st, "job", "status", job)
		if api.Terminal(st.State) {
			return
		}
		hc.Harm(t, st, rng)
	}
}

// Harm picks one: SIGKILL a role, SIGSTOP one briefly or past its lease,
// or pause etcd.
func (hc *HostCluster) Harm(t *testing.T, st api.JobStatus, rng *rand.Rand) {
	t.Helper()
	if rng.IntN(6) == 0 {
		hc.PauseEtcd(t, time.Duration(2+rng.IntN(9))*time.Second, st.Step)
		return
	}
	name, pid := RandomRole(st, rng)
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

// RandomRole picks a running worker of the job at random: its name and
// pid.
func RandomRole(st api.JobStatus, rng *rand.Rand) (string, int) {
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
