package supervisor

import (
	"fmt"
	"syscall"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
)

// A worker the job's master declared hung (schema.HungRecord: alive, not
// progressing for the job's restarts.hung_after) is SIGKILLed by the agent
// that runs it; its runner then restarts it as a crash, counted against the
// crash budget: a hang is the role's fault.

// applyHungLocked acts on job's hung record of worker, if this node runs it.
func (s *Supervisor) applyHungLocked(job, worker string, raw []byte) {
	e := s.jobs[job]
	if e == nil {
		return
	}
	r := e.runners[worker]
	if r == nil || r.finished() {
		return
	}
	h, err := schema.Decode[schema.HungRecord](raw)
	if err != nil {
		s.log.Warn("unreadable hung record", "job", job, "worker", worker, "err", err)
		return
	}
	if h.Host != "" && !coord.IsLocalHost(h.Host) {
		return // a process of another host with the same node name
	}
	go r.killHung(h, s.clock.Now())
}

// applyHungKVsLocked acts on the hung records among kvs (a full read).
func (s *Supervisor) applyHungKVsLocked(kvs []*mvccpb.KeyValue) {
	for _, kv := range kvs {
		if key, ok := coord.ParseJobKey(string(kv.Key)); ok && key.Kind == coord.JobKeyHung {
			s.applyHungLocked(key.Job, key.Name, kv.Value)
		}
	}
}

// killHung SIGKILLs the runner's child if it is the process h names (a
// record of an earlier incarnation is left alone) and says so.
func (r *runner) killHung(h schema.HungRecord, now time.Time) {
	r.mu.Lock()
	killed := r.pid > 0 && r.pid == h.PID
	if killed {
		signalGroup(r.pid, syscall.SIGKILL)
	}
	r.mu.Unlock()
	if !killed {
		return
	}
	what := fmt.Sprintf("%s hung for %s; killed to restart it (%s)", r.worker, now.Sub(h.Since).Round(time.Second), h.Reason)
	r.sup.log.Warn(what, "job", r.job, "pid", h.PID)
	r.event(what)
}

func (r *runner) setPID(pid int) {
	r.mu.Lock()
	r.pid = pid
	r.mu.Unlock()
}
