package coord

import (
	"cmp"
	"fmt"
	"slices"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord/schema"
)

// JobView is what the agent's readers (the scheduler, the Control API's
// status, logs and scaling) know of one job from the keys
// under its JobPrefix, decoded here, where the encodings live, so that no
// reader decodes a record of its own.
type JobView struct {
	Name      string
	Record    *schema.JobRecord // nil: no record (not yet, or purged)
	RecordRev int64             // create revision of the record: the job's fence
	State     schema.StateRecord
	Progress  *schema.ProgressRecord
	Placement *schema.PlacementRecord         // nil: the scheduler never placed it
	Storage   map[string]schema.StorageResult // node -> its answer to the storage check
	Workers   map[string]schema.WorkerRecord  // worker name -> record
	Pservers  map[int]schema.PserverRecord    // pserver index -> record
	Trainers  map[string]int                  // worker name -> dense trainer ID
	Hung      map[string]schema.HungRecord    // worker name -> the master's hung report
	Reshard   schema.ReshardRequest           // zero: pservers never scaled
	Layout    schema.LayoutRecord             // zero: never re-sharded
	Events    []api.Event                     // in key (= time) order
	// For the drain handover: the mod revision of the job's global
	// checkpoint record, and whether its master has saved its state.
	CheckpointRev int64
	MasterSaved   bool
	// Broken: a key of the job that was decoded did not decode
	// (DecodeJobs says which).
	Broken bool
}

// NewJobView is an empty view of job, ready for Add.
func NewJobView(job string) *JobView {
	return &JobView{Name: job, Storage: map[string]schema.StorageResult{}, Workers: map[string]schema.WorkerRecord{},
		Pservers: map[int]schema.PserverRecord{}, Trainers: map[string]int{}, Hung: map[string]schema.HungRecord{}}
}

// DecodeJobs groups the key-values read under JobsPrefix (or one JobPrefix)
// by job and decodes them, in submit order (jobs without a record last, by
// name). Given only some kinds, it decodes only keys of those kinds (a
// reader neither pays for nor fails on the others). A key that does not
// decode marks its job Broken and is an error naming the key; the other
// keys and jobs are still decoded.
func DecodeJobs(kvs []*mvccpb.KeyValue, only ...JobKeyKind) ([]*JobView, []error) {
	byJob := map[string]*JobView{}
	var errs []error
	for _, kv := range kvs {
		key, ok := ParseJobKey(string(kv.Key))
		if !ok || len(only) > 0 && !slices.Contains(only, key.Kind) {
			continue
		}
		v := byJob[key.Job]
		if v == nil {
			v = NewJobView(key.Job)
			byJob[key.Job] = v
		}
		if err := v.Add(key, kv); err != nil {
			errs = append(errs, fmt.Errorf("job %s: decode %s: %w", key.Job, kv.Key, err))
			v.Broken = true
		}
	}
	views := make([]*JobView, 0, len(byJob))
	for _, v := range byJob {
		views = append(views, v)
	}
	slices.SortFunc(views, func(a, b *JobView) int {
		if (a.RecordRev == 0) != (b.RecordRev == 0) {
			return cmp.Compare(b.RecordRev, a.RecordRev) // a record first
		}
		return cmp.Or(cmp.Compare(a.RecordRev, b.RecordRev), cmp.Compare(a.Name, b.Name))
	})
	return views, errs
}

// Add decodes kv, the key of v's job that key names, into v.
func (v *JobView) Add(key JobKeyParts, kv *mvccpb.KeyValue) error {
	var err error
	switch key.Kind {
	case JobKeyRecord:
		err = decodeTo(kv.Value, func(r schema.JobRecord) { v.Record, v.RecordRev = &r, kv.CreateRevision })
	case JobKeyState:
		err = decodeTo(kv.Value, func(s schema.StateRecord) { v.State = s })
	case JobKeyProgress:
		err = decodeTo(kv.Value, func(p schema.ProgressRecord) { v.Progress = &p })
	case JobKeyPlacement:
		err = decodeTo(kv.Value, func(p schema.PlacementRecord) { v.Placement = &p })
	case JobKeyHung:
		err = decodeTo(kv.Value, func(h schema.HungRecord) { v.Hung[key.Name] = h })
	case JobKeyStorage:
		err = decodeTo(kv.Value, func(r schema.StorageResult) { v.Storage[key.Name] = r })
	case JobKeyWorker:
		err = decodeTo(kv.Value, func(w schema.WorkerRecord) { v.Workers[key.Name] = w })
	case JobKeyPserver:
		err = decodeTo(kv.Value, func(p schema.PserverRecord) { v.Pservers[p.Index] = p })
	case JobKeyTrainer:
		err = decodeTo(kv.Value, func(t schema.TrainerRecord) { v.Trainers[t.Worker] = t.ID })
	case JobKeyReshardRequest:
		err = decodeTo(kv.Value, func(r schema.ReshardRequest) { v.Reshard = r })
	case JobKeyLayout:
		err = decodeTo(kv.Value, func(l schema.LayoutRecord) { v.Layout = l })
	case JobKeyEvent:
		err = decodeTo(kv.Value, func(e api.Event) { v.Events = append(v.Events, e) })
	case JobKeyOther:
		switch _, kind := ParseHandoverKey(string(kv.Key)); kind {
		case HandoverCheckpoint:
			v.CheckpointRev = kv.ModRevision
		case HandoverMaster:
			v.MasterSaved = true
		}
	default:
		err = fmt.Errorf("key kind %d has no decoder", key.Kind)
	}
	return err
}

// decodeTo decodes raw as a T and, when it decodes, hands it to set.
func decodeTo[T any](raw []byte, set func(T)) error {
	r, err := schema.Decode[T](raw)
	if err == nil {
		set(r)
	}
	return err
}
