package schema

import "time"

// ReshardRequest is the pserver count wanted by `gctl job scale --pservers`.
type ReshardRequest struct {
	Pservers  int       `json:"pservers"`
	By        string    `json:"by,omitempty"`
	Requested time.Time `json:"requested"`
}

// LayoutRecord is one layout generation: the parameters are cut over
// Pservers pservers from global checkpoint FromStep on. The checkpoint of
// FromStep itself was written by SourcePservers pservers (the generation
// before), so a pserver restoring exactly FromStep re-cuts their files.
type LayoutRecord struct {
	Generation     int64     `json:"generation"`
	Pservers       int       `json:"pservers"`
	FromStep       int64     `json:"from_step"`
	SourcePservers int       `json:"source_pservers"`
	Paused         time.Time `json:"paused"` // when the master stopped handing out steps for it
	// PauseMs is how long training stopped, from Paused to the first step
	// committed under this layout; 0 while that step has not come.
	PauseMs int64 `json:"pause_ms"`
}

// Resharding reports whether the generation's pause has not ended yet.
func (l LayoutRecord) Resharding() bool { return l.Generation > 0 && l.PauseMs == 0 }
