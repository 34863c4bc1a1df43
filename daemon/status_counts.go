package daemon

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
	st.PserversMin, st.PserversMax = spec.PserverBounds()
	if spec.Mode == jobspec.ModeSync {
		st.GlobalBatch = spec.StepRecords()
	}
	st.TrainersCurrent, st.PserversCurrent = 0, 0
	if p := s.progress; p != nil {
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
