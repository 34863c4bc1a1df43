package e2e

import (
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/netcluster"
)

// TestClusterEtcdOutage: every etcd member is SIGSTOPped in the middle of a
// sync job across three hosts, for 15 s and then for 45 s. The roles wait
// for etcd instead of spending their crash budgets, the job resumes by
// itself once etcd answers again, and it SUCCEEDS with every record applied
// once and the uninterrupted run's model. It runs in parallel with the
// soak and the five-minute outage (TestMain gives all three a slot): its
// cluster idles for the minute etcd is stopped.
func TestClusterEtcdOutage(t *testing.T) {
	t.Parallel()
	runEtcdOutages(t, "etcd-outage", 15*time.Second, 45*time.Second)
}

// TestClusterEtcdOutageFiveMinutes is TestClusterEtcdOutage with one
// outage of 5 minutes. It runs in parallel with the soak and
// TestClusterEtcdOutage: while etcd is stopped its cluster is idle, and the
// suite need not wait 5 minutes more.
func TestClusterEtcdOutageFiveMinutes(t *testing.T) {
	t.Parallel()
	runEtcdOutages(t, "etcd-outage-5m", 5*time.Minute)
}

func runEtcdOutages(t *testing.T, job string, outages ...time.Duration) {
	hc := startHostCluster(t, netcluster.EtcdCertUser)
	ref := hc.referenceSums(t)
	hc.submit(t, 0, job)
	st := waitJob(t, hc.on(0), job, "training to progress", 60*time.Second, func(st api.JobStatus) bool { return st.Step > 60 })
	for _, outage := range outages {
		hc.pauseEtcd(t, outage, st.Step)
		resumed := time.Now()
		st = waitJob(t, hc.on(0), job, "training to go on after the outage", 60*time.Second, progressedFrom(st.Step+50))
		t.Logf("the job stepped on %s after etcd's return, at step %d", time.Since(resumed).Round(time.Millisecond), st.Step)
	}
	st = waitJob(t, hc.on(0), job, "the job to finish", 150*time.Second, succeeded)
	logEvents(t, st)
	assertExact(t, st)
	assertSameModel(t, st, ref)
	t.Logf("restarts: master %d, %+v, %+v", st.Master.Restarts, trainersOf(st), pserversOf(st))
}

// pauseEtcd SIGSTOPs every etcd member for d, then SIGCONTs them all.
func (hc *hostCluster) pauseEtcd(t *testing.T, d time.Duration, step int64) {
	t.Helper()
	t.Logf("SIGSTOP every etcd member for %s at step %d", d, step)
	for _, m := range hc.Etcd {
		if err := m.Pause(); err != nil {
			t.Fatal(err)
		}
	}
	resume := func() {
		for _, m := range hc.Etcd {
			_ = m.Resume()
		}
	}
	defer resume()
	time.Sleep(d)
	resume()
}
