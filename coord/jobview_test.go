package coord

import (
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/gtrain/gtrain/api"
)

func kvAt(key, value string, create, mod int64) *mvccpb.KeyValue {
	return &mvccpb.KeyValue{Key: []byte(key), Value: []byte(value), CreateRevision: create, ModRevision: mod}
}

// Every kind of key under a job lands in its field of the view, and the
// jobs come in submit order.
func TestDecodeJobsFillsEveryKind(t *testing.T) {
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	kvs := []*mvccpb.KeyValue{
		kvAt(JobKey("b"), `{"spec":{"name":"b"}}`, 9, 9),
		kvAt(JobKey("a"), `{"spec":{"name":"a"}}`, 4, 4),
		kvAt(StateKey("a"), `{"state":"RUNNING"}`, 5, 6),
		kvAt(ProgressKey("a"), `{"pass":2}`, 5, 6),
		kvAt(PlacementKey("a"), `{"gen":3,"workers":{"master":{"node":"n1","gen":3}}}`, 5, 6),
		kvAt(StorageKey("a", "n1"), `{"token":"t1"}`, 5, 6),
		kvAt(WorkerKey("a", "master"), `{"name":"master","node":"n1"}`, 5, 6),
		kvAt(PserverKey("a", 1), `{"index":1}`, 5, 6),
		kvAt(TrainerKey("a", 0), `{"worker":"trainer-3","id":0}`, 5, 6),
		kvAt(HungKey("a", "trainer-3"), `{"pid":42}`, 5, 6),
		kvAt(ReshardRequestKey("a"), `{"pservers":3}`, 5, 6),
		kvAt(LayoutKey("a"), `{"pservers":2}`, 5, 6),
		kvAt(EventKey("a", at, "x"), `{"what":"started"}`, 5, 6),
		kvAt(GlobalCheckpointKey("a"), `{}`, 5, 17),
		kvAt(MasterMetaKey("a"), `{}`, 5, 6),
		kvAt(StateKey("orphan"), `{"state":"RUNNING"}`, 2, 2),
	}
	views, errs := DecodeJobs(kvs)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var names []string
	for _, v := range views {
		names = append(names, v.Name)
	}
	if strings.Join(names, ",") != "a,b,orphan" {
		t.Errorf("order %v, want a,b (submit order), then orphan (no record)", names)
	}
	a := views[0]
	switch {
	case a.Record == nil || a.Record.Spec.Name != "a" || a.RecordRev != 4:
		t.Errorf("record %+v at %d", a.Record, a.RecordRev)
	case a.State.State != api.StateRunning:
		t.Errorf("state %+v", a.State)
	case a.Progress == nil || a.Progress.Pass != 2:
		t.Errorf("progress %+v", a.Progress)
	case a.Placement == nil || a.Placement.Workers["master"].Node != "n1":
		t.Errorf("placement %+v", a.Placement)
	case a.Storage["n1"].Token != "t1":
		t.Errorf("storage %+v", a.Storage)
	case a.Workers["master"].Node != "n1":
		t.Errorf("workers %+v", a.Workers)
	case a.Pservers[1].Index != 1:
		t.Errorf("pservers %+v", a.Pservers)
	case a.Trainers["trainer-3"] != 0 || len(a.Trainers) != 1:
		t.Errorf("trainers %+v", a.Trainers)
	case a.Hung["trainer-3"].PID != 42:
		t.Errorf("hung %+v", a.Hung)
	case a.Reshard.Pservers != 3 || a.Layout.Pservers != 2:
		t.Errorf("reshard %+v layout %+v", a.Reshard, a.Layout)
	case len(a.Events) != 1 || a.Events[0].What != "started":
		t.Errorf("events %+v", a.Events)
	case a.CheckpointRev != 17 || !a.MasterSaved:
		t.Errorf("handover: checkpoint rev %d, master saved %v", a.CheckpointRev, a.MasterSaved)
	}
}

// A key that does not decode marks its job broken and names the key; the
// job's other keys and the other jobs are still read.
func TestDecodeJobsReportsABrokenKey(t *testing.T) {
	kvs := []*mvccpb.KeyValue{
		kvAt(JobKey("a"), `{"spec":{"name":"a"}}`, 4, 4),
		kvAt(ProgressKey("a"), `{"pass":"two"}`, 5, 5),
		kvAt(StateKey("a"), `{"state":"RUNNING"}`, 5, 5),
		kvAt(JobKey("b"), `{"spec":{"name":"b"}}`, 6, 6),
	}
	views, errs := DecodeJobs(kvs)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), ProgressKey("a")) {
		t.Fatalf("errors %v, want one naming %s", errs, ProgressKey("a"))
	}
	if len(views) != 2 || !views[0].Broken || views[0].State.State != api.StateRunning || views[1].Broken {
		t.Errorf("views %+v, %+v: want a broken (its state read) and b whole", views[0], views[1])
	}
	// A reader that decodes only some kinds neither reads nor fails on the
	// broken progress key.
	views, errs = DecodeJobs(kvs, JobKeyRecord, JobKeyState)
	if len(errs) != 0 || len(views) != 2 || views[0].Broken || views[0].State.State != api.StateRunning || views[0].Progress != nil {
		t.Errorf("record and state only: views %+v, errors %v; want a whole, its progress not read", views[0], errs)
	}
}
