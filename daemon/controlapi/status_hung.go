package controlapi

import (
	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord/schema"
)

// hungReason is why the master declared worker w hung, or "" when it is not:
// the record must name the process w's record says is running now (a
// record of an earlier incarnation, or of a worker that already stopped or
// whose node is down, is not shown — a status never lies).
func (s *jobSnapshot) hungReason(w schema.WorkerRecord) string {
	h, ok := s.Hung[w.Name]
	if !ok || api.Terminal(s.State.State) || h.PID != w.PID {
		return ""
	}
	if w.State != api.WorkerRunning && w.State != api.WorkerHung {
		return ""
	}
	return h.Reason
}
