package endurance

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/e2erig"
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
	t.Parallel()
	trainsAllAlong(t)
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
	hc := e2erig.StartHostCluster(t, netcluster.EtcdPlain)
	ref := hc.ReferenceSums(t)
	deadline := time.Now().Add(d)
	for i := 0; i == 0 || time.Now().Before(deadline); i++ {
		name := fmt.Sprintf("soak-%d", i)
		spec := hc.ClusterJob(name)
		spec.Restarts = jobspec.RestartsSpec{Limit: 40, Window: "60s"}
		hc.SubmitSpec(t, 0, spec)
		hc.ChaosUntilEnd(t, name, rng, deadline)
		st := e2erig.WaitJob(t, hc.On(0), name, "the job to finish", 240*time.Second, e2erig.Succeeded)
		e2erig.AssertExact(t, st)
		e2erig.AssertSameModel(t, st, ref)
		if t.Failed() {
			e2erig.LogEvents(t, st)
			return
		}
	}
}
