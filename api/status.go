package api

import "time"

// JobState is where a job is in its life (docs/reference.md#job-states).
type JobState string

// Job states (docs/reference.md#job-states).
const (
	StatePending   JobState = "PENDING"
	StateRunning   JobState = "RUNNING"
	StateSucceeded JobState = "SUCCEEDED"
	StateFailed    JobState = "FAILED"
	StateStopped   JobState = "STOPPED"
)

// Terminal reports whether a job in this state has ended: nothing of it
// runs, and only `gctl job resume` (a STOPPED or FAILED job) runs it again.
func Terminal(state JobState) bool {
	return state == StateSucceeded || state == StateFailed || state == StateStopped
}

// WorkerState is a role process as the agent that supervises it last
// recorded it (docs/reference.md#worker-states).
type WorkerState string

// Worker states.
const (
	WorkerPending    WorkerState = "pending" // no record yet; only shown, never written
	WorkerStarting   WorkerState = "starting"
	WorkerRunning    WorkerState = "running"
	WorkerRestarting WorkerState = "restarting"
	WorkerExited     WorkerState = "exited"
	WorkerFailed     WorkerState = "failed"
	WorkerStopped    WorkerState = "stopped"
	// WorkerLost is a worker whose record says it runs on a node that is
	// down: whatever it was doing, it is not running. Only shown, never written.
	WorkerLost WorkerState = "lost"
	// WorkerHung is a running worker that the job's master found alive but
	// not progressing for the job's restarts.hung_after; its agent kills it
	// to restart it. Only shown, never written by an agent.
	WorkerHung WorkerState = "hung"
	// WorkerExiting is a worker whose job ended while its process still
	// runs, on its way out (a master lets its trainers hear the end): it
	// is no longer running the job. Only shown, never written.
	WorkerExiting WorkerState = "exiting"
)

// Active reports whether a worker in this state has (or is about to have)
// a live process.
func (s WorkerState) Active() bool {
	return s == WorkerStarting || s == WorkerRunning || s == WorkerRestarting || s == WorkerHung || s == WorkerExiting
}

// NodeState is a node as `gctl node list` shows it (docs/reference.md#node-states).
type NodeState string

// Node states.
const (
	NodeReady    NodeState = "ready"    // registered and alive: takes new work
	NodeDown     NodeState = "down"     // its lease ended or gossip declared it dead; it stays listed
	NodeDraining NodeState = "draining" // alive, but `gctl node drain` moves its roles away
)

// TaskCounts is the master's queue at a glance.
type TaskCounts struct {
	Todo    int `json:"todo"`
	Pending int `json:"pending"`
	Done    int `json:"done"`
	Failed  int `json:"failed"`
}

// Metrics are the job's latest losses. Nil means "not measured yet".
type Metrics struct {
	TrainLoss    *float64 `json:"train_loss"`
	TestLoss     *float64 `json:"test_loss"`
	TestAccuracy *float64 `json:"test_accuracy"`
}

// TrainerStatus is one trainer in JobStatus.
type TrainerStatus struct {
	ID       int         `json:"id"`
	Name     string      `json:"name"`
	Node     string      `json:"node"`
	PID      int         `json:"pid"`
	State    WorkerState `json:"state"`
	Restarts int         `json:"restarts"`
	// BudgetUsed is how many of Restarts count against the job's crash
	// budget now: crashes within the budget's window (exits after losing
	// etcd or the master do not count).
	BudgetUsed int `json:"budget_used"`
	// Reason says why the state is what it is, when that is not obvious
	// (state "hung": what the master saw).
	Reason string `json:"reason,omitempty"`
	// StepMs (sync) is the trainer's last micro-batch time in ms, from
	// hand-out to report; null before its first.
	StepMs *float64 `json:"step_ms"`
}

// PserverStatus is one pserver in JobStatus.
type PserverStatus struct {
	Index          int         `json:"index"`
	Name           string      `json:"name"`
	Node           string      `json:"node"`
	PID            int         `json:"pid"`
	Addr           string      `json:"addr"`
	State          WorkerState `json:"state"`
	Restarts       int         `json:"restarts"`
	CheckpointStep int64       `json:"checkpoint_step"`
	BudgetUsed     int         `json:"budget_used"` // as in TrainerStatus
	Reason         string      `json:"reason,omitempty"`
}

// MasterStatus is the job's master in JobStatus.
type MasterStatus struct {
	Name     string `json:"name"`
	Node     string `json:"node"`
	PID      int    `json:"pid"`
	Restarts int    `json:"restarts"`
	// BudgetUsed is as in TrainerStatus.
	BudgetUsed int `json:"budget_used"`
}

// RestartBudget is the job's crash budget, per role (docs/reference.md#job-spec restarts): a
// role that crashes more than Limit times within Window fails the job.
type RestartBudget struct {
	Limit  int    `json:"limit"`
	Window string `json:"window"`
}

// Event is something an operator should know happened to the job.
type Event struct {
	Time time.Time `json:"time"`
	What string    `json:"what"`
}

// JobStatus is `gctl job status NAME -o json` (docs/reference.md#job-status-json).
type JobStatus struct {
	Name           string          `json:"name"`
	State          JobState        `json:"state"`
	Reason         string          `json:"reason,omitempty"`
	Mode           string          `json:"mode"`
	Pass           int             `json:"pass"`
	Passes         int             `json:"passes"`
	Step           int64           `json:"step"`
	Tasks          TaskCounts      `json:"tasks"`
	SamplesApplied []int64         `json:"samples_applied"`
	Trainers       []TrainerStatus `json:"trainers"`
	Pservers       []PserverStatus `json:"pservers"`
	Master         MasterStatus    `json:"master"`
	RestartBudget  RestartBudget   `json:"restart_budget"`
	Metrics        Metrics         `json:"metrics"`
	ModelDir       string          `json:"model_dir"`
	Created        time.Time       `json:"created"`
	// Owner is who submitted the job ("name (role)"); "" for a job
	// submitted before roles existed.
	Owner string `json:"owner,omitempty"`
	// Priority is the spec's priority: placement order among waiting jobs.
	Priority int     `json:"priority"`
	Events   []Event `json:"events"`
	// Warnings are conditions the job survives but an operator should fix,
	// e.g. a pserver whose checkpoint writes fail; empty when there are none.
	Warnings []string `json:"warnings"`
	// History is one entry per finished pass, oldest first (see PassHistory).
	History []PassHistory `json:"history"`

	// Elastic counts (docs/reference.md#job-status-json): the desired count and its bounds, and how
	// many run now; global_batch is the records of a sync step.
	TrainersCount   int `json:"trainers_count"`
	TrainersMin     int `json:"trainers_min"`
	TrainersMax     int `json:"trainers_max"`
	TrainersCurrent int `json:"trainers_current"`
	PserversCount   int `json:"pservers_count"`
	PserversMin     int `json:"pservers_min"`
	PserversMax     int `json:"pservers_max"`
	PserversCurrent int `json:"pservers_current"`
	GlobalBatch     int `json:"global_batch,omitempty"`
	// PserversResharding: training is paused (or about to be) while the
	// pservers are re-sharded to pservers_count; ReshardPauseMs is how long
	// the last finished re-shard paused training (0: none finished).
	PserversResharding bool  `json:"pservers_resharding"`
	ReshardPauseMs     int64 `json:"reshard_pause_ms"`
}

// JobRow is one row of `gctl job list`.
type JobRow struct {
	Name     string    `json:"name"`
	State    JobState  `json:"state"`
	Pass     int       `json:"pass"`
	Passes   int       `json:"passes"`
	Trainers int       `json:"trainers"`
	Pservers int       `json:"pservers"`
	Loss     *float64  `json:"loss"`
	Created  time.Time `json:"created"`
	Age      string    `json:"age"`
	Owner    string    `json:"owner,omitempty"` // as in JobStatus
}

// WorkerRow is one row of `gctl job workers`.
type WorkerRow struct {
	Name     string      `json:"name"`
	Node     string      `json:"node"`
	PID      int         `json:"pid"`
	State    WorkerState `json:"state"`
	Restarts int         `json:"restarts"`
	Start    time.Time   `json:"start"`
	// GPUs are the devices of its node placement gave it (its
	// CUDA_VISIBLE_DEVICES); empty when it asked none.
	GPUs []int `json:"gpus"`
}

// NodeRow is one row of `gctl node list`: the node's capacity (cpu,
// memory in bytes, gpus, labels) and the job processes placed on it.
type NodeRow struct {
	Name   string    `json:"name"`
	Addr   string    `json:"addr"`
	State  NodeState `json:"state"`
	CPU    float64   `json:"cpu"`
	Memory int64     `json:"memory"`
	GPUs   int       `json:"gpus"`
	// What the workers placed on it ask of it (jobs that have not ended).
	CPUUsed    float64           `json:"cpu_used"`
	MemoryUsed int64             `json:"memory_used"`
	GPUsUsed   int               `json:"gpus_used"`
	Labels     map[string]string `json:"labels"`
	Roles      []string          `json:"roles"`
	// Devices are its GPUs that placed workers hold, by device index.
	Devices []GPUDevice `json:"devices"`
	// CertNotAfter is when its node certificate expires; null without TLS.
	CertNotAfter *time.Time `json:"cert_not_after"`
}

// CertWarnBefore is how long before a node certificate expires `gctl node
// list` warns about it.
const CertWarnBefore = 14 * 24 * time.Hour

// QuotaRow is `gctl quota get`: a user's limits (null: no limit in that
// dimension; all null: the user has no quota) and what the user's jobs
// with placed workers ask now.
type QuotaRow struct {
	User       string   `json:"user"`
	CPU        *float64 `json:"cpu"`
	Memory     *int64   `json:"memory"` // bytes
	GPUs       *int     `json:"gpus"`
	Jobs       *int     `json:"jobs"`
	CPUUsed    float64  `json:"cpu_used"`
	MemoryUsed int64    `json:"memory_used"`
	GPUsUsed   int      `json:"gpus_used"`
	JobsUsed   int      `json:"jobs_used"`
}

// RevokedTokenRow is `gctl token revoke`'s answer: the token id now on the
// deny-list, until when the entry is kept (every token with the id has
// expired by then), and who revoked it.
type RevokedTokenRow struct {
	ID    string    `json:"id"`
	Until time.Time `json:"until"`
	By    string    `json:"by"`
}

// GPUDevice is one GPU of a node and the worker placement gave it to.
type GPUDevice struct {
	Index  int    `json:"index"`
	Holder string `json:"holder"` // <job>/<worker>
}
