package daemon

import "github.com/gtrain/gtrain/api"

// warnings are what an operator should act on while the job goes on
// (SPEC §5 `warnings`): today each pserver's failing checkpoint writes, in
// index order, as the pserver published them in its registration. A job
// that ended has none: its pservers' registrations went with them. Never nil.
func (s *jobSnapshot) warnings(pservers int) []string {
	out := []string{}
	if api.Terminal(s.state.State) {
		return out
	}
	for i := range pservers {
		if w := s.pservers[i].CheckpointWarning; w != "" {
			out = append(out, w)
		}
	}
	return out
}
