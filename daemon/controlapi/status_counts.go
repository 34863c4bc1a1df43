package controlapi

import (
	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/jobspec"
)

// fillCounts sets the elastic counts of st: desired (the spec's count, which
// `gctl job scale` moves), bounds, the workers running now, and each
// trainer's recent micro-batch time.
func fillCounts(st *api.JobStatus, s *jobSnapshot, spec *jobspec.Spec) {
	st.TrainersCount = spec.Trainers
	st.TrainersMin, st.TrainersMax = spec.TrainerBounds()
	st.PserversCount = spec.Pservers
	if s.Reshard.Pservers > 0 {
		st.PserversCount = s.Reshard.Pservers // desired; the spec's count moves when the re-shard commits
	}
	st.PserversResharding = !api.Terminal(s.State.State) && (s.Layout.Resharding() || st.PserversCount != spec.Pservers)
	if s.Layout.PauseMs > 0 {
		st.ReshardPauseMs = s.Layout.PauseMs
	}
	st.PserversMin, st.PserversMax = spec.PserverBounds()
	if spec.Mode == jobspec.ModeSync {
		st.GlobalBatch = spec.StepRecords()
	}
	st.TrainersCurrent, st.PserversCurrent = 0, 0
	if p := s.Progress; p != nil {
		for i := range st.Trainers {
			if ms, ok := p.StepMs[st.Trainers[i].ID]; ok {
				st.Trainers[i].StepMs = &ms
			}
		}
	}
	for _, t := range st.Trainers {
		if t.State == api.WorkerRunning {
			st.TrainersCurrent++
		}
	}
	for _, p := range st.Pservers {
		if p.State == api.WorkerRunning {
			st.PserversCurrent++
		}
	}
}
