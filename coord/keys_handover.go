package coord

// Keys the scheduler reads to hand a sync job's workers off a draining node
// at a global checkpoint: the checkpoint record, whose revision tells
// whether a checkpoint completed after the drain began, and the master's
// meta, whose presence tells that the job has started training.

// HandoverKind is what a key under JobsPrefix tells the drain handover.
type HandoverKind int

const (
	HandoverNone       HandoverKind = iota // a key the handover does not read
	HandoverCheckpoint                     // GlobalCheckpointKey
	HandoverMaster                         // MasterMetaKey: the job's master has saved its state
)

// ParseHandoverKey says which job a key belongs to and whether the drain
// handover reads it.
func ParseHandoverKey(key string) (job string, kind HandoverKind) {
	job, _, ok := JobOfKey(key)
	if !ok {
		return "", HandoverNone
	}
	switch key {
	case GlobalCheckpointKey(job):
		return job, HandoverCheckpoint
	case MasterMetaKey(job):
		return job, HandoverMaster
	}
	return job, HandoverNone
}
