package jobspec

import "strconv"

// MasterName is the worker name of a job's master.
const MasterName = "master"

// PserverName is the worker name of pserver i ("pserver-0").
func PserverName(i int) string { return "pserver-" + strconv.Itoa(i) }

// TrainerName is the worker name of trainer i ("trainer-0").
func TrainerName(i int) string { return "trainer-" + strconv.Itoa(i) }

// Workers lists the role processes of the job, in start order: the master,
// then pserver-0..P-1, then trainer-0..T-1. These are the names users pass to
// `gctl job logs -w`.
func (s *Spec) Workers() []string {
	names := make([]string, 0, 1+max(s.Pservers, 0)+max(s.Trainers, 0))
	names = append(names, MasterName)
	for i := 0; i < s.Pservers; i++ {
		names = append(names, PserverName(i))
	}
	for i := 0; i < s.Trainers; i++ {
		names = append(names, TrainerName(i))
	}
	return names
}
