package master

import (
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
)

// TestEtcdStoreWritesHistory: a Meta carrying a newly finished pass writes
// it into the job's history in the same save, once; a master that loads
// that Meta does not write it again, and a rollback's older LastPass
// rewrites its block without the voided passes.
func TestEtcdStoreWritesHistory(t *testing.T) {
	cli := dialTest(t, startTestEtcd(t))
	job := "hist"
	_, lead := leadJob(t, cli, job, "m")
	s := NewEtcdStore(cli, lead, job)
	meta := storeMeta(1)
	for p := range 3 {
		meta.Pass, meta.LastPass = p+1, &api.PassHistory{Pass: p, Samples: 404, Ended: time.Unix(int64(p), 0)}
		if err := s.Save(t.Context(), meta, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	h, err := coord.ReadHistory(t.Context(), cli, job, 10)
	if err != nil || len(h) != 3 || h[2].Pass != 2 {
		t.Fatalf("history after 3 passes: %+v, %v", h, err)
	}
	resp, err := cli.Get(t.Context(), coord.HistoryBlockKey(job, 0))
	if err != nil {
		t.Fatal(err)
	}
	rev := resp.Kvs[0].ModRevision
	again := NewEtcdStore(cli, lead, job)
	if _, _, err := again.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	meta.Step++
	if err := again.Save(t.Context(), meta, nil, nil); err != nil {
		t.Fatal(err)
	}
	if resp, _ := cli.Get(t.Context(), coord.HistoryBlockKey(job, 0)); resp.Kvs[0].ModRevision != rev {
		t.Error("a restarted master wrote a pass already in the history again")
	}
	meta.Pass, meta.LastPass = 1, &api.PassHistory{Pass: 0, Samples: 404, Ended: time.Unix(100, 0)}
	if err := again.Save(t.Context(), meta, nil, nil); err != nil {
		t.Fatal(err)
	}
	if h, _ := coord.ReadHistory(t.Context(), cli, job, 10); len(h) != 1 || !h[0].Ended.Equal(time.Unix(100, 0)) {
		t.Errorf("history after a rollback to pass 1: %+v, want only the new pass 0", h)
	}
}
