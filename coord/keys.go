package coord

import (
	"fmt"
	"strconv"
	"strings"
)

// Root is the prefix of every gtrain key, so one etcd can serve other users too.
const Root = "/gtrain/"

// Keys of the cluster. Each job has its small records under JobPrefix and its
// (potentially 100k) task states under TaskPrefix, so reading a job's status
// never scans its tasks.
func NodePrefix() string              { return Root + "nodes/" }
func NodeKey(node string) string      { return NodePrefix() + node }
func JobsPrefix() string              { return Root + "jobs/" }
func JobPrefix(job string) string     { return JobsPrefix() + job + "/" }
func JobKey(job string) string        { return JobPrefix(job) + "record" }
func StateKey(job string) string      { return JobPrefix(job) + "state" }
func ProgressKey(job string) string   { return JobPrefix(job) + "progress" }
func MasterMetaKey(job string) string { return JobPrefix(job) + "master/meta" }
func ElectionPrefix(job string) string {
	return JobPrefix(job) + "master/election"
}
func WorkerPrefix(job string) string          { return JobPrefix(job) + "workers/" }
func WorkerKey(job, worker string) string     { return WorkerPrefix(job) + worker }
func PserverPrefix(job string) string         { return JobPrefix(job) + "pservers/" }
func PserverKey(job string, index int) string { return PserverPrefix(job) + strconv.Itoa(index) }
func TrainerPrefix(job string) string         { return JobPrefix(job) + "trainers/" }
func TrainerKey(job string, id int) string    { return TrainerPrefix(job) + strconv.Itoa(id) }
func EventPrefix(job string) string           { return JobPrefix(job) + "events/" }
func CheckpointPrefix(job string) string      { return JobPrefix(job) + "checkpoints" }

// CheckpointRecordKey holds pserver index's newest checkpoint record.
func CheckpointRecordKey(job string, index int) string {
	return CheckpointPrefix(job) + "/" + strconv.Itoa(index)
}
func TaskPrefix(job string) string { return Root + "tasks/" + job + "/" }

// TaskSlotPrefix holds one of the two copies of a job's task states: a full
// rewrite (a new pass, a rollback) goes to the other slot and the master's
// meta, written last, switches to it, so a crash in the middle of a rewrite
// too large for one transaction leaves the previous copy whole.
func TaskSlotPrefix(job string, slot int) string { return fmt.Sprintf("%s%d/", TaskPrefix(job), slot) }

// TaskKey zero-pads the ID so that a range read returns tasks in ID order.
func TaskKey(job string, slot, id int) string {
	return fmt.Sprintf("%s%08d", TaskSlotPrefix(job, slot), id)
}

// JobOfKey returns the job name of a key under JobsPrefix and the rest of the key.
func JobOfKey(key string) (job, rest string, ok bool) {
	s, ok := strings.CutPrefix(key, JobsPrefix())
	if !ok {
		return "", "", false
	}
	job, rest, ok = strings.Cut(s, "/")
	return job, rest, ok
}

// GlobalCheckpointKey holds the newest complete global checkpoint of a sync job:
// a step at which every pserver's shard and the master's state are on disk.
func GlobalCheckpointKey(job string) string { return JobPrefix(job) + "checkpoint/global" }

// CheckpointMarkPrefix holds one small key per (step, participant), written once
// that participant's checkpoint of the step is durable and recorded.
func CheckpointMarkPrefix(job string) string { return JobPrefix(job) + "checkpoint/marks/" }

// CheckpointMarkKey is the mark of who (e.g. "pserver-1", "master") at step.
func CheckpointMarkKey(job string, step int64, who string) string {
	return fmt.Sprintf("%s%012d/%s", CheckpointMarkPrefix(job), step, who)
}

// MasterHolderKey names the process that leads a job's election, so a
// successor on the same node can tell a dead leader from a live one.
func MasterHolderKey(job string) string { return JobPrefix(job) + "master/holder" }
