package schema

import (
	"slices"
	"time"
)

// Capacity is what a node offers to the roles placed on it (docs/reference.md#gtraind-agent
// --cpu, --memory, --gpus, --labels).
type Capacity struct {
	CPU    float64           `json:"cpu"`
	Memory int64             `json:"memory"` // bytes
	GPUs   int               `json:"gpus"`
	Labels map[string]string `json:"labels,omitempty"`
}

// DrainRecord marks a node the operator drains (`gctl node drain`): the
// scheduler moves its roles away and places nothing new there.
type DrainRecord struct {
	Since time.Time `json:"since"`
	Via   string    `json:"via"` // the agent that took the request
}

// PlacementRecord is where the scheduler runs a job's workers. Only the
// cluster's scheduler writes it, fenced on its leadership and on the job
// record's create revision; each agent starts the workers assigned to it
// and stops those moved away.
type PlacementRecord struct {
	// Gen grows with every change; an Assignment keeps the Gen at which it
	// was made, so a runner of an older assignment cannot overwrite the
	// WorkerRecord of a newer one.
	Gen     int64                 `json:"gen"`
	Workers map[string]Assignment `json:"workers"` // worker -> node; a worker not in it is not placed
	// Reason says why a worker is not placed or cannot start yet ("" when
	// nothing waits): what is short, and where.
	Reason string `json:"reason,omitempty"`
	// Verified are the nodes that proved they share the job's
	// checkpoint.dir; an agent starts a worker of a job with a
	// checkpoint.dir only once its node is among them.
	Verified []string      `json:"verified,omitempty"`
	Check    *StorageCheck `json:"check,omitempty"` // the storage check under way
	// Yield: trainers this job gives up to a job of higher priority at its
	// next global checkpoint (nil: none).
	Yield *Yield `json:"yield,omitempty"`
	// Home is the node a resumed job without checkpoint.dir must return to
	// (its checkpoints are on that node's disk) while none of its workers
	// is placed ("" for any other job).
	Home    string    `json:"home,omitempty"`
	Updated time.Time `json:"updated"`
}

// Yield is a shrink of an elastic sync job that waits for its next global
// checkpoint: once the job's global checkpoint record changes after
// revision After, the scheduler unplaces Trainers.
type Yield struct {
	Trainers []string `json:"trainers"`
	For      string   `json:"for"`   // why, naming the job of higher priority
	After    int64    `json:"after"` // the checkpoint record's mod revision when it was decided (0: none yet)
}

// Assignment places one worker on one node.
type Assignment struct {
	Node string `json:"node"`
	Gen  int64  `json:"gen"`
	// GPUs are the node's GPUs (indices from 0, below its capacity) that
	// the worker holds alone, chosen with the assignment; its agent pins
	// them with CUDA_VISIBLE_DEVICES. Empty: the worker asked none.
	GPUs []int `json:"gpus,omitempty"`
}

// Nodes maps each placed worker to its node.
func (p PlacementRecord) Nodes() map[string]string {
	out := make(map[string]string, len(p.Workers))
	for w, a := range p.Workers {
		out[w] = a.Node
	}
	return out
}

// IsVerified reports whether node proved it shares the job's checkpoint.dir.
func (p PlacementRecord) IsVerified(node string) bool { return slices.Contains(p.Verified, node) }

// StorageCheck asks the agents of Nodes to prove that Dir is one shared
// directory: each writes a marker file carrying Token and reads back the
// markers of the others, and those that Refs names wrote earlier.
type StorageCheck struct {
	Token   string    `json:"token"`
	Dir     string    `json:"dir"`
	Nodes   []string  `json:"nodes"`          // the nodes that take part, sorted
	Refs    []string  `json:"refs,omitempty"` // verified nodes not taking part (e.g. down) whose markers must be readable
	Started time.Time `json:"started"`
}

// StorageResult is one agent's answer to a StorageCheck.
type StorageResult struct {
	Token string `json:"token"`
	Node  string `json:"node"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}
