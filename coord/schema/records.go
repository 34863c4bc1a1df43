package schema

import (
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/jobspec"
)

// NodeRecord is an agent. Under NodeKey it is stored under the agent's
// lease, so that it disappears when the agent does (the node's liveness);
// the same record under NodeInfoKey has no lease and outlives the agent, so
// that a dead node stays listed as down.
type NodeRecord struct {
	Name       string        `json:"name"`
	APIAddr    string        `json:"api_addr"`
	GossipAddr string        `json:"gossip_addr"`
	Capacity   Capacity      `json:"capacity"`
	DataDir    string        `json:"data_dir"`
	State      api.NodeState `json:"state"`
	Started    time.Time     `json:"started"`
	PID        int           `json:"pid"`            // the agent's process: a dead one's name may be reclaimed at once
	Host       string        `json:"host,omitempty"` // HostID of the agent: where PID means something
	// CertNotAfter is when the agent's node certificate (--tls-cert)
	// expires, kept current when the file is replaced; nil without TLS.
	CertNotAfter *time.Time `json:"cert_not_after,omitempty"`
}

// JobRecord is the desired state of a job: its spec, written at submit;
// only `gctl job scale` changes it after (the trainer count, SetTrainerCount).
type JobRecord struct {
	Spec jobspec.Spec `json:"spec"`
	// Placement (worker -> node) is not stored here: the scheduler keeps it
	// in the job's PlacementRecord (PlacementKey). Readers that load a whole
	// job fill it from there, so that code reading a job sees where its
	// workers run now.
	Placement map[string]string `json:"placement,omitempty"`
	Created   time.Time         `json:"created"`
	Submitter *Submitter        `json:"submitter,omitempty"` // nil: submitted before roles existed
}

// StateRecord is the job's lifecycle state.
type StateRecord struct {
	State   api.JobState `json:"state"`
	Reason  string       `json:"reason,omitempty"`
	Updated time.Time    `json:"updated"`
}

// WorkerRecord is what the supervising agent knows of one role process.
type WorkerRecord struct {
	Name     string          `json:"name"`
	Node     string          `json:"node"`
	PID      int             `json:"pid"`
	Host     string          `json:"host,omitempty"` // HostID of the agent that started it: where PID means something
	State    api.WorkerState `json:"state"`          // never api.WorkerPending
	Restarts int             `json:"restarts"`
	Start    time.Time       `json:"start"`
	ExitCode int             `json:"exit_code"`
	Updated  time.Time       `json:"updated"`
	// Gen is the placement generation (Assignment.Gen) the writing runner
	// serves: a record is never overwritten by a runner of an older one.
	Gen int64 `json:"gen,omitempty"`
	// Crashes are the times of the crashes counted against the job's crash
	// budget (exits after losing etcd or the master are not), so that
	// status can show how much of the budget is used.
	Crashes []time.Time `json:"crashes,omitempty"`
}

// PserverRecord announces a pserver shard; it lives under the pserver's lease
// and is created only if absent, so one index is never served twice.
type PserverRecord struct {
	Index          int    `json:"index"`
	Addr           string `json:"addr"`
	Node           string `json:"node"`
	PID            int    `json:"pid"`
	Host           string `json:"host,omitempty"` // HostID of the process: where PID means something
	CheckpointStep int64  `json:"checkpoint_step"`
	RestoredStep   int64  `json:"restored_step"` // the step this incarnation started from
	Ready          bool   `json:"ready"`         // restored and serving
	// CheckpointWarning says why this pserver's checkpoint writes fail
	// ("" while they succeed); status lists it under warnings.
	CheckpointWarning string `json:"checkpoint_warning,omitempty"`
	// MemoryWarning says that this pserver's embedding tables grow toward
	// its memory request ("" while they are well under it); status lists
	// it under warnings, before the process is killed for it.
	MemoryWarning string `json:"memory_warning,omitempty"`
	// Generation is the layout generation (LayoutRecord) this incarnation
	// serves: clients of another generation do not count it.
	Generation int64 `json:"generation,omitempty"`
	// Socket is a unix socket this pserver serves on besides Addr, for
	// clients in the network host SocketHost names (coord.NetHostID): moving
	// the parameters through it costs a quarter to a third less CPU than
	// through TCP on loopback. "" when it serves on Addr alone.
	Socket     string `json:"socket,omitempty"`
	SocketHost string `json:"socket_host,omitempty"`
}

// CheckpointMark is the value of a participant's checkpoint mark of one
// step: the record of that checkpoint file, which a restore of the step
// loads only if its sha256 still matches. (Marks before this record were
// the bare file name: they record no sha256, so their files are not loaded.)
type CheckpointMark struct {
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
}

// GlobalCheckpoint is the newest step at which the whole job is on disk.
type GlobalCheckpoint struct {
	Step  int64   `json:"step"` // the newest
	Pass  int     `json:"pass"`
	Steps []int64 `json:"steps"` // the complete ones still kept, oldest first (Step last)
}

// Has reports whether step is a complete global checkpoint still kept (0,
// the start, always is).
func (g GlobalCheckpoint) Has(step int64) bool {
	if step == 0 {
		return true
	}
	for _, s := range g.Steps {
		if s == step {
			return true
		}
	}
	return false
}

// TrainerRecord binds a dense trainer ID to a worker, under the trainer's lease.
type TrainerRecord struct {
	ID     int    `json:"id"`
	Worker string `json:"worker"`
}

// ProgressRecord is the master's public view of training.
type ProgressRecord struct {
	Pass           int            `json:"pass"`
	Passes         int            `json:"passes"`
	Step           int64          `json:"step"`
	Tasks          api.TaskCounts `json:"tasks"`
	SamplesApplied []int64        `json:"samples_applied"`
	Metrics        api.Metrics    `json:"metrics"`
	ModelDir       string         `json:"model_dir"`
	Epoch          int64          `json:"epoch"` // sync: rollbacks so far
	Updated        time.Time      `json:"updated"`
	// StepMs (sync) is each trainer's (by ID) last micro-batch time in ms,
	// hand-out to report: how status shows a straggler.
	StepMs map[int]float64 `json:"step_ms,omitempty"`
	// Warnings are what the master cannot do until an operator acts (a
	// model write that fails at a pass end); status lists them.
	Warnings []string `json:"warnings,omitempty"`
}
