package coord

import (
	"fmt"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gtrain/gtrain/jobspec"
)

// MasterMark is the master's name among the participants that mark a
// checkpoint step (the pservers are "pserver-N").
const MasterMark = jobspec.MasterName

// MasterCheckpointPrefix is where the checkpoint recorder keeps the records
// of the master's own checkpoints (the pservers' are under CheckpointPrefix).
func MasterCheckpointPrefix(job string) string { return JobPrefix(job) + "master/checkpoint" }

// MasterCheckpointRecordKey holds the master's newest checkpoint record
// (the master has one store; index is always 0).
func MasterCheckpointRecordKey(job string, index int) string {
	return MasterCheckpointPrefix(job) + "/" + strconv.Itoa(index)
}

// CheckpointMarkStepPrefix holds the marks of every participant at step; a
// range from it deletes the marks of that step and of every later one.
func CheckpointMarkStepPrefix(job string, step int64) string {
	return fmt.Sprintf("%s%012d/", CheckpointMarkPrefix(job), step)
}

// ParseCheckpointMarkKey returns the step and the participant of a key
// written by CheckpointMarkKey.
func ParseCheckpointMarkKey(job, key string) (step int64, who string, ok bool) {
	rest, ok := strings.CutPrefix(key, CheckpointMarkPrefix(job))
	if !ok {
		return 0, "", false
	}
	stepStr, who, ok := strings.Cut(rest, "/")
	if !ok || who == "" {
		return 0, "", false
	}
	step, err := strconv.ParseInt(stepStr, 10, 64)
	if err != nil || step < 0 {
		return 0, "", false
	}
	return step, who, true
}

// ParseTrainerKey returns the trainer ID of a key written by TrainerKey.
func ParseTrainerKey(job, key string) (id int, ok bool) {
	rest, ok := strings.CutPrefix(key, TrainerPrefix(job))
	if !ok {
		return 0, false
	}
	id, err := strconv.Atoi(rest)
	if err != nil || id < 0 {
		return 0, false
	}
	return id, true
}

// ParseTaskKey returns the task ID of a key written by TaskKey into slot.
func ParseTaskKey(job string, slot int, key string) (id int, ok bool) {
	rest, ok := strings.CutPrefix(key, TaskSlotPrefix(job, slot))
	if !ok {
		return 0, false
	}
	id, err := strconv.Atoi(rest)
	if err != nil || id < 0 {
		return 0, false
	}
	return id, true
}

// DeleteMarksBefore deletes the checkpoint marks of every step below step.
func DeleteMarksBefore(job string, step int64) clientv3.Op {
	return clientv3.OpDelete(CheckpointMarkPrefix(job), clientv3.WithRange(CheckpointMarkStepPrefix(job, step)))
}

// DeleteMarksFrom deletes the checkpoint marks of step and of every later one.
func DeleteMarksFrom(job string, step int64) clientv3.Op {
	return clientv3.OpDelete(CheckpointMarkStepPrefix(job, step), clientv3.WithRange(clientv3.GetPrefixRangeEnd(CheckpointMarkPrefix(job))))
}
