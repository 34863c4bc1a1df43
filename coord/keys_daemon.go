package coord

import (
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// JobKeyKind is what a key under JobsPrefix holds, for the readers that take
// a whole job (or every job) in one range read or watch: the agent's status
// documents and its supervisor.
type JobKeyKind int

const (
	JobKeyOther          JobKeyKind = iota // a key these readers skip (master meta, checkpoints, ...)
	JobKeyRecord                           // JobKey: the schema.JobRecord
	JobKeyState                            // StateKey: the schema.StateRecord
	JobKeyProgress                         // ProgressKey: the schema.ProgressRecord
	JobKeyWorker                           // WorkerKey: a schema.WorkerRecord, Name is the worker
	JobKeyPserver                          // PserverKey: a schema.PserverRecord, Name is the index
	JobKeyTrainer                          // TrainerKey: a schema.TrainerRecord, Name is the trainer ID
	JobKeyEvent                            // EventKey: an api.Event
	JobKeyPlacement                        // PlacementKey: the schema.PlacementRecord
	JobKeyStorage                          // StorageKey: a schema.StorageResult, Name is the node
	JobKeyHung                             // HungKey: a schema.HungRecord, Name is the worker
	JobKeyReshardRequest                   // ReshardRequestKey: the schema.ReshardRequest
	JobKeyLayout                           // LayoutKey: the schema.LayoutRecord
)

// JobKeyParts is a key under JobsPrefix taken apart.
type JobKeyParts struct {
	Job  string
	Kind JobKeyKind
	Name string // the key's last segment under a collection prefix; "" for the job's single records
}

// ParseJobKey takes apart a key built by this package under JobsPrefix; ok is
// false for a key outside it.
func ParseJobKey(key string) (parts JobKeyParts, ok bool) {
	job, _, ok := JobOfKey(key)
	if !ok {
		return JobKeyParts{}, false
	}
	parts = JobKeyParts{Job: job}
	switch key {
	case JobKey(job):
		parts.Kind = JobKeyRecord
	case StateKey(job):
		parts.Kind = JobKeyState
	case ProgressKey(job):
		parts.Kind = JobKeyProgress
	case PlacementKey(job):
		parts.Kind = JobKeyPlacement
	case ReshardRequestKey(job):
		parts.Kind = JobKeyReshardRequest
	case LayoutKey(job):
		parts.Kind = JobKeyLayout
	default:
		parts.Kind, parts.Name = collectionKey(job, key)
	}
	return parts, true
}

// collectionKey sorts a key of job into one of its collections of records.
func collectionKey(job, key string) (JobKeyKind, string) {
	collections := []struct {
		prefix string
		kind   JobKeyKind
	}{
		{WorkerPrefix(job), JobKeyWorker},
		{PserverPrefix(job), JobKeyPserver},
		{TrainerPrefix(job), JobKeyTrainer},
		{EventPrefix(job), JobKeyEvent},
		{StoragePrefix(job), JobKeyStorage},
		{HungPrefix(job), JobKeyHung},
	}
	for _, c := range collections {
		name, ok := strings.CutPrefix(key, c.prefix)
		if ok && name != "" && !strings.Contains(name, "/") {
			return c.kind, name
		}
	}
	return JobKeyOther, ""
}

// EventKey is the key of an event of job recorded at `at`; id tells apart
// events of the same nanosecond. Keys sort by time.
func EventKey(job string, at time.Time, id string) string {
	return fmt.Sprintf("%s%020d-%s", EventPrefix(job), at.UnixNano(), id)
}

// PurgeJobOps deletes everything a job keeps in etcd: its records, its
// task states, its uploaded package and its data-plane secret. Run them in
// one transaction.
func PurgeJobOps(job string) []clientv3.Op {
	return []clientv3.Op{
		clientv3.OpDelete(JobPrefix(job), clientv3.WithPrefix()),
		clientv3.OpDelete(TaskPrefix(job), clientv3.WithPrefix()),
		clientv3.OpDelete(PackageKey(job)),
		clientv3.OpDelete(JobSecretKey(job)),
		DeleteHistoryOp(job),
	}
}
