package master

import (
	"fmt"
	"time"

	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pserver/client"
)

// hungFinding is a worker found alive but not progressing.
type hungFinding struct {
	PID    int // the incarnation found hung
	Since  time.Time
	Reason string
}

// stepStall is Driver.Stalled(after) of a sync job with trainers trainers.
type stepStall struct {
	step     int64
	missing  []int
	stalled  bool
	trainers int
}

// hungWatch decides (sync) which workers are hung: a trainer that has not
// reported the step the others did, or a pserver that has not answered a
// health probe, each for at least after. It is pure — the leader feeds it
// the workers' PIDs, the probes' results and the time — so that it can be
// tested with any clock.
type hungWatch struct {
	after    time.Duration
	seen     map[string]incarnation // worker -> its current process
	answered map[int]time.Time      // pserver index -> last answer (or when its clock (re)started)
	silent   map[int]bool           // pserver index -> its last probe timed out
}

// incarnation is one process of a worker and when it was first seen: a
// replacement gets a full hung_after of its own.
type incarnation struct {
	pid   int
	since time.Time
}

func newHungWatch(after time.Duration) *hungWatch {
	return &hungWatch{after: after, seen: map[string]incarnation{}, answered: map[int]time.Time{}, silent: map[int]bool{}}
}

// observe notes the running processes (worker -> PID; workers that do not
// run now are absent).
func (h *hungWatch) observe(pids map[string]int, now time.Time) {
	for w, pid := range pids {
		if h.seen[w].pid != pid {
			h.seen[w] = incarnation{pid: pid, since: now}
		}
	}
	for w := range h.seen {
		if _, ok := pids[w]; !ok {
			delete(h.seen, w)
		}
	}
}

// probed notes pserver index's health at now. Only silence keeps its clock
// running: an unreachable pserver is dead or moving, not hung.
func (h *hungWatch) probed(index int, health client.Health, now time.Time) {
	h.silent[index] = health == client.Silent
	if _, ok := h.answered[index]; !ok || health != client.Silent {
		h.answered[index] = now
	}
}

// running returns worker's process if it runs and has for at least after.
func (h *hungWatch) running(worker string, now time.Time) (int, bool) {
	inc, ok := h.seen[worker]
	return inc.pid, ok && now.Sub(inc.since) >= h.after
}

// find returns the workers hung at now, by worker name. trainerWorker
// names a trainer ID's worker.
func (h *hungWatch) find(now time.Time, st stepStall, pservers int, trainerWorker func(int) string) map[string]hungFinding {
	out := map[string]hungFinding{}
	pserversSilent := false
	for i := range pservers {
		last, ok := h.answered[i]
		pserversSilent = pserversSilent || h.silent[i]
		w := jobspec.PserverName(i)
		if pid, alive := h.running(w, now); ok && alive && h.silent[i] && now.Sub(last) >= h.after {
			out[w] = hungFinding{PID: pid, Since: last,
				Reason: fmt.Sprintf("%s has not answered a health probe for %s", w, now.Sub(last).Round(time.Second))}
		}
	}
	// A step waits for every trainer when a pserver is silent, and for all
	// of them alike when the master is at fault: a trainer is hung only if
	// the pservers answer and another trainer did report the step.
	if !st.stalled || pserversSilent || (len(st.missing) >= st.trainers && st.trainers > 1) {
		return out
	}
	for _, id := range st.missing {
		w := trainerWorker(id)
		if pid, alive := h.running(w, now); alive {
			out[w] = hungFinding{PID: pid, Since: now.Add(-h.after),
				Reason: fmt.Sprintf("%s has not reported step %d for %s", w, st.step, h.after)}
		}
	}
	return out
}
