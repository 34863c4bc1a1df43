package core

import (
	"time"

	"github.com/gtrain/gtrain/api"
)

// Meta is the master's small, whole-job state; it is written with every
// saved change, beside the changed tasks, in the same commit (sync step
// commits are saved in the background: see Effects.Deferred).
type Meta struct {
	Tasks          int     `json:"tasks"`           // task count, to refuse a state cut from other data
	Pass           int     `json:"pass"`            // passes finished == the current pass index
	Step           int64   `json:"step"`            // sync: global steps committed; async: minibatches reported
	PassStartStep  int64   `json:"pass_start_step"` // sync: first global step of the current pass
	SamplesApplied []int64 `json:"samples_applied"` // per finished pass
	PassSamples    int64   `json:"pass_samples"`    // in the current pass so far
	PassLossSum    float64 `json:"pass_loss_sum"`
	// PassLossSkipped is the records of PassSamples whose loss is not in
	// PassLossSum: steps a new master committed from the plan (Core.CatchUp).
	PassLossSkipped int64       `json:"pass_loss_skipped,omitempty"`
	Metrics         api.Metrics `json:"metrics"`
	Done            bool        `json:"done"`
	Epoch           int64       `json:"epoch"` // sync: bumped by every rollback; older reports are void
	Slot            int         `json:"slot"`  // which copy of the task states is current (see coord.TaskSlotPrefix)
	// PassStart is when the current pass started (the core's time), for
	// the history's seconds; LastPass is the newest finished pass, which
	// a Store writes into the job's history in the commit of this Meta.
	PassStart time.Time        `json:"pass_start,omitzero"`
	LastPass  *api.PassHistory `json:"last_pass,omitempty"`
}
