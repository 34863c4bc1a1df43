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
	after time.Duration
	seen  map[string]incarnation // worker -> its current process
	// silentSince holds, for each pserver whose probes time out, when the
	// first of those probes was sent: its silence is measured from then,
	// not from its last answer (up to a probe interval earlier).
	silentSince map[int]time.Time
}

// incarnation is one process of a worker and when it was first seen: a
// replacement gets a full hung_after of its own.
type incarnation struct {
	pid   int
	since time.Time
}

func newHungWatch(after time.Duration) *hungWatch {
	return &hungWatch{after: after, seen: map[string]incarnation{}, silentSince: map[int]time.Time{}}
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

// probed notes the health of pserver index by a probe sent at sent. Only
// silence counts: an unreachable pserver is dead or moving, not hung.
func (h *hungWatch) probed(index int, health client.Health, sent time.Time) {
	if health != client.Silent {
		delete(h.silentSince, index)
		return
	}
	if _, ok := h.silentSince[index]; !ok {
		h.silentSince[index] = sent
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
		since, silent := h.silentSince[i]
		pserversSilent = pserversSilent || silent
		w := jobspec.PserverName(i)
		if pid, alive := h.running(w, now); alive && silent && now.Sub(since) >= h.after {
			out[w] = hungFinding{PID: pid, Since: since,
				Reason: fmt.Sprintf("%s has not answered a health probe for %s", w, now.Sub(since).Round(time.Second))}
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
