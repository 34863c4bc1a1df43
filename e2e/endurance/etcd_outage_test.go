package endurance

import (
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/internal/testing/netcluster"
)

// TestClusterEtcdOutage: every etcd member is SIGSTOPped in the middle of a
// sync job across three hosts, for 15 s and then for 45 s. The roles wait
// for etcd instead of spending their crash budgets, the job resumes by
// itself once etcd answers again, and it SUCCEEDS with every record applied
// once and the uninterrupted run's model. It runs in parallel with the
// other tests of this package: its cluster idles while etcd is stopped.
func TestClusterEtcdOutage(t *testing.T) {
	t.Parallel()
	runEtcdOutages(t, "etcd-outage", 15*time.Second, 45*time.Second)
}

// TestClusterEtcdOutageFiveMinutes is TestClusterEtcdOutage with one
// outage of 5 minutes. It runs in parallel with the other tests of this
// package, and the package beside e2e: while etcd is stopped its cluster is
// idle, and the suite need not wait 5 minutes more.
func TestClusterEtcdOutageFiveMinutes(t *testing.T) {
	t.Parallel()
	runEtcdOutages(t, "etcd-outage-5m", 5*time.Minute)
}

func runEtcdOutages(t *testing.T, job string, outages ...time.Duration) {
	hc := e2erig.StartHostCluster(t, netcluster.EtcdCertUser)
	ref := hc.ReferenceSums(t)
	hc.Submit(t, 0, job)
	st := e2erig.WaitJob(t, hc.On(0), job, "training to progress", 60*time.Second, func(st api.JobStatus) bool { return st.Step > 60 })
	for _, outage := range outages {
		hc.PauseEtcd(t, outage, st.Step)
		resumed := time.Now()
		st = e2erig.WaitJob(t, hc.On(0), job, "training to go on after the outage", 60*time.Second, e2erig.ProgressedFrom(st.Step+50))
		t.Logf("the job stepped on %s after etcd's return, at step %d", time.Since(resumed).Round(time.Millisecond), st.Step)
	}
	st = e2erig.WaitJob(t, hc.On(0), job, "the job to finish", 150*time.Second, e2erig.Succeeded)
	e2erig.LogEvents(t, st)
	e2erig.AssertExact(t, st)
	e2erig.AssertSameModel(t, st, ref)
	t.Logf("restarts: master %d, %+v, %+v", st.Master.Restarts, e2erig.TrainersOf(st), e2erig.PserversOf(st))
}
