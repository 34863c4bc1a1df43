package controlapi

import "github.com/gtrain/gtrain/api"

// warnings are what an operator should act on while the job goes on
// (docs/reference.md#job-status-json `warnings`): first the master's (a model write that fails at a
// pass end, from its progress record), then each pserver's failing
// checkpoint writes and embedding tables near its memory request, in index
// order, as the pserver published them in its
// registration. A job that ended has none: its pservers' registrations went
// with them, and its master writes no more. Never nil.
func (s *jobSnapshot) warnings(pservers int) []string {
	out := []string{}
	if api.Terminal(s.State.State) {
		return out
	}
	if s.Progress != nil {
		out = append(out, s.Progress.Warnings...)
	}
	for i := range pservers {
		for _, w := range []string{s.Pservers[i].CheckpointWarning, s.Pservers[i].MemoryWarning} {
			if w != "" {
				out = append(out, w)
			}
		}
	}
	return out
}
