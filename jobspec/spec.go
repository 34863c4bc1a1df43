package jobspec

import (
	"slices"

	"github.com/gtrain/gtrain/model"
)

// Mode is how trainers and pservers step (docs/reference.md#job-spec): in lockstep (sync) or
// each at its own pace (async).
type Mode string

// Values accepted in Spec.Mode.
const (
	ModeSync  Mode = "sync"
	ModeAsync Mode = "async"
)

// Values accepted in OptimizerSpec.Kind. Model kinds are the model
// package's (model.KindLinear, ...).
const (
	OptimizerSGD      = "sgd"
	OptimizerMomentum = "momentum"
	OptimizerAdagrad  = "adagrad"
	OptimizerAdam     = "adam"
)

// Spec is a training job as submitted (docs/reference.md#job-spec). Field order follows the YAML
// document, which is also the order Validate checks them in. The JSON form
// (stored in etcd) uses the same snake_case names as the YAML.
type Spec struct {
	Name      string `yaml:"name" json:"name"`
	Mode      Mode   `yaml:"mode" json:"mode"`
	Trainers  int    `yaml:"trainers" json:"trainers"`
	Pservers  int    `yaml:"pservers" json:"pservers"`
	Passes    int    `yaml:"passes" json:"passes"`
	BatchSize int    `yaml:"batch_size" json:"batch_size"`

	// GlobalBatch is the records of one sync step (0: trainers × batch_size,
	// see FixGlobalBatch); BatchSize is then the micro-batch.
	GlobalBatch int `yaml:"global_batch" json:"global_batch,omitempty"`

	// Bounds of the counts (bounds.go): set from the YAML mapping form
	// `trainers: {count, min, max}`; 0 means "as the count".
	TrainersMin int `yaml:"-" json:"trainers_min,omitempty"`
	TrainersMax int `yaml:"-" json:"trainers_max,omitempty"`
	PserversMin int `yaml:"-" json:"pservers_min,omitempty"`
	PserversMax int `yaml:"-" json:"pservers_max,omitempty"`

	Seed       uint64         `yaml:"seed" json:"seed"`
	Model      ModelSpec      `yaml:"model" json:"model"`
	Optimizer  OptimizerSpec  `yaml:"optimizer" json:"optimizer"`
	Data       DataSpec       `yaml:"data" json:"data"`
	Checkpoint CheckpointSpec `yaml:"checkpoint" json:"checkpoint"`
	Resources  ResourcesSpec  `yaml:"resources" json:"resources"`
	Restarts   RestartsSpec   `yaml:"restarts" json:"restarts"`
	Stragglers StragglersSpec `yaml:"stragglers" json:"stragglers,omitzero"`
	InitFrom   InitFromSpec   `yaml:"init_from" json:"init_from,omitzero"`
	// Env reaches the model program (env.go: names, deny-list, path lists).
	Env map[string]string `yaml:"env" json:"env,omitempty"`
	// Priority orders placement: a higher one is placed first among the
	// jobs that wait (0 by default; within ±MaxPriority).
	Priority int `yaml:"priority" json:"priority,omitempty"`
}

// ModelSpec selects a built-in model (see model.Spec for the meaning of each
// field) or a user's program (Kind "program": Entry, Workspace, Timeout; see
// program.go and docs/program-protocol.md).
type ModelSpec struct {
	Kind    string `yaml:"kind" json:"kind"`
	Inputs  int    `yaml:"inputs" json:"inputs"`
	Outputs int    `yaml:"outputs" json:"outputs"`
	Hidden  []int  `yaml:"hidden" json:"hidden"`
	// Program models only.
	Entry     string `yaml:"entry" json:"entry,omitempty"`
	Workspace string `yaml:"workspace" json:"workspace,omitempty"`
	Timeout   string `yaml:"timeout" json:"timeout,omitempty"`
	// Package is the SHA-256 of the workspace uploaded with the job
	// (`gctl job start --package DIR`), instead of Workspace; set by gctl.
	Package string `yaml:"-" json:"package,omitempty"`
	// Declared is filled by the agent that accepts the job, never by the
	// user (no YAML field): what the program declared at submit.
	Declared *Declared `yaml:"-" json:"declared,omitempty"`
	// Recommender models only (recommender.go): the rows' default
	// dimension and per id field table settings.
	Dim    int                  `yaml:"dim" json:"dim,omitempty"`
	Tables map[string]TableSpec `yaml:"tables" json:"tables,omitempty"`
	// Interaction is how the pooled vectors meet (model.RecSpec): concat
	// ("" too) or dot.
	Interaction string `yaml:"interaction" json:"interaction,omitempty"`
	// Fields are the records' id fields, one table each, pinned by the
	// agent that accepts the job from the shards' metadata (no YAML field).
	Fields []string `yaml:"-" json:"fields,omitempty"`
}

// ToModel is the model section in the model package's terms.
func (m ModelSpec) ToModel() model.Spec {
	return model.Spec{Kind: m.Kind, Inputs: m.Inputs, Outputs: m.Outputs, Hidden: slices.Clone(m.Hidden)}
}

// OptimizerSpec configures the pserver's update rule. Momentum applies to
// "momentum", Beta1/Beta2/Epsilon to "adam" (Epsilon also to "adagrad").
type OptimizerSpec struct {
	Kind         string  `yaml:"kind" json:"kind"`
	LearningRate float64 `yaml:"learning_rate" json:"learning_rate"`
	// Momentum is a pointer so that a written 0 (plain SGD through the
	// momentum rule) stays 0 instead of becoming the default; read it with
	// MomentumValue.
	Momentum *float64 `yaml:"momentum" json:"momentum"`
	Beta1    float64  `yaml:"beta1" json:"beta1"`
	Beta2    float64  `yaml:"beta2" json:"beta2"`
	Epsilon  float64  `yaml:"epsilon" json:"epsilon"`
}

// Slots is how many values per parameter the optimizer keeps as its state
// (pserver.Optimizer.Slots agrees, tested there): sgd none, momentum its
// velocity, adagrad its sum of squares, adam its two moments.
func (o OptimizerSpec) Slots() int {
	switch o.Kind {
	case OptimizerMomentum, OptimizerAdagrad:
		return 1
	case OptimizerAdam:
		return 2
	}
	return 0
}

// DataSpec names the record shards. Train and Test are globs; after
// ResolvePaths they are absolute.
type DataSpec struct {
	Train         string `yaml:"train" json:"train"`
	Test          string `yaml:"test" json:"test"`
	ChunksPerTask int    `yaml:"chunks_per_task" json:"chunks_per_task"`
	// Shuffle: each pass reads the tasks, and the records within each task,
	// in an order seeded by the job's seed and the pass; false keeps the
	// stored order. Unset means true (see ShuffleRecords).
	Shuffle *bool `yaml:"shuffle" json:"shuffle,omitempty"`
}

// CheckpointSpec says how often pservers snapshot and how many snapshots they
// keep. Every is a Go duration ("10s") or a step count ("200"); see Interval.
// An empty Dir means the agent's default (<data-dir>/jobs/<name>/checkpoints).
type CheckpointSpec struct {
	Every string `yaml:"every" json:"every"`
	Keep  int    `yaml:"keep" json:"keep"`
	Dir   string `yaml:"dir" json:"dir"`
}

// ResourcesSpec is what one trainer and one pserver process each need.
type ResourcesSpec struct {
	Trainer Resource `yaml:"trainer" json:"trainer"`
	Pserver Resource `yaml:"pserver" json:"pserver"`
}

// Resource is a per-process request. Zero CPU and empty Memory mean "not
// stated". Memory is a quantity such as "512Mi"; see MemoryBytes. GPU is
// how many of a node's GPUs the process gets to itself (0: none; it then
// sees no GPU at all).
type Resource struct {
	CPU    float64 `yaml:"cpu" json:"cpu"`
	Memory string  `yaml:"memory" json:"memory"`
	GPU    int     `yaml:"gpu" json:"gpu,omitempty"`
}

// MomentumValue is the momentum the pserver applies: the written value, 0
// included, or DefaultMomentum when the field was omitted.
func (o OptimizerSpec) MomentumValue() float64 {
	if o.Momentum == nil {
		return DefaultMomentum
	}
	return *o.Momentum
}
