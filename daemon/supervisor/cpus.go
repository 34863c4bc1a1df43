package supervisor

import (
	"context"
	"log/slog"
	"math"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/internal/cpuaffinity"
)

// cpuReconcile is how often the agent puts every role thread back on the
// CPUs it should run on, besides each time a trainer gets or gives back
// exclusive CPUs: a thread started while they changed may have inherited
// the old ones.
const cpuReconcile = 10 * time.Second

// cpuManager gives a trainer of a built-in model that asks for whole CPUs
// (resources.trainer.cpu 1, 2, ...) as many CPUs of this node for its computing threads alone, when
// the agent runs with --exclusive-cpus and the node keeps at least one CPU
// for everything else: the agent, the masters, the pservers, and the
// trainers' other threads (network, copies), which run on the shared CPUs
// only. Kubernetes' static CPU-manager policy does the same for pods that
// ask for whole cores.
//
// Why: on a 2-core VM a trainer of cpu 1 computed its micro-batch in the
// time of the gradient alone only when no other thread shared its core
// (docs/performance.md, "Exclusive CPUs"); Linux otherwise queues the
// computation behind a pserver or the trainer's own network threads that
// woke on its core, 1-2 ms a step. With this, alternated runs stepped in
// 32.3 ms against 33.6.
//
// Known gaps: a job's trainers can still end up some with CPUs and some
// without (another job's trainer starting in between takes them; a trainer
// added by scaling up counts trainers anew; a refused trainer does not ask
// again); a threaded product's helper thread (cpu 2 and up; the trainer's
// computing thread stays pinned for its life) restores the CPUs it had
// before, which a give meanwhile may have narrowed, until the next
// reconcile finds it unpinned; the roles of a purged job, or of a replaced runner still
// stopping, are not among the running ones.
//
// The CPUs are exclusive among this agent's processes only: the node's other
// services keep running where they were (systemd's CPUAffinity= keeps
// them off, when the operator wants that).
type cpuManager struct {
	pool    []int // the agent's CPUs when it started
	reserve int   // CPUs never given: the shared ones
	log     *slog.Logger

	mu    sync.Mutex
	given map[*runner][]int
	// forks is held while a role process starts and while CPUs are given
	// and applied: a child forked by an agent thread not yet moved, or not
	// yet among the running roles, would keep a CPU just given away.
	forks sync.Mutex
}

func newCPUManager(enabled bool, log *slog.Logger) *cpuManager {
	if !enabled {
		return nil
	}
	pool, err := cpuaffinity.Allowed()
	if err != nil {
		log.Warn("exclusive CPUs off: cannot read the agent's CPUs", "err", err)
		return nil
	}
	log.Info("exclusive CPUs on: trainers asking whole CPUs compute on CPUs of their own", "cpus", cpuaffinity.Format(pool))
	return &cpuManager{pool: pool, reserve: 1, log: log, given: map[*runner][]int{}}
}

// acquire gives r, one of trainersHere trainers of its job on this node,
// the exclusive CPUs a trainer of cpu CPUs gets, or none: a fraction of a
// CPU, or too few free CPUs for every trainer of its job here that has
// none yet, plus the shared reserve. All or none of a job's trainers on a
// node: one trainer on CPUs of its own and one beside the pservers makes
// each synchronous step wait for the second (2 trainers of cpu 1 on the
// 2-core VM, one given a CPU: 28-38 ms a step against 24-30 sharing).
// It takes the highest-numbered free CPUs, leaving CPU 0 (where many
// machines steer interrupts) shared. CPUs are not held for the trainers of
// a job that have not started yet: a trainer of another job starting in
// between may take them, and those then compute on the shared CPUs.
func (m *cpuManager) acquire(r *runner, cpu float64, trainersHere int) []int {
	if m == nil || cpu < 1 || cpu != math.Trunc(cpu) {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	free := m.sharedLocked()
	n := int(cpu)
	waiting := max(trainersHere, 1)
	for other := range m.given {
		if other.job == r.job && other != r {
			waiting--
		}
	}
	if len(free)-n*waiting < m.reserve {
		m.log.Info("no exclusive CPUs for a trainer: its job's trainers on this node would not all have theirs, with one CPU kept shared",
			"job", r.job, "worker", r.worker, "cpu", n, "trainers_here", trainersHere, "free", len(free))
		return nil
	}
	cpus := slices.Clone(free[len(free)-n:])
	m.given[r] = cpus
	return cpus
}

// lockForks holds back CPU changes until the returned function runs: a
// runner starts its role process (and records its PID) in between.
func (m *cpuManager) lockForks() (unlock func()) {
	if m == nil {
		return func() {}
	}
	m.forks.Lock()
	return m.forks.Unlock
}

// give is acquire, then apply with no role process starting meanwhile.
func (m *cpuManager) give(r *runner, cpu float64, trainersHere int, running func() map[*runner]int) []int {
	if m == nil {
		return nil
	}
	m.forks.Lock()
	defer m.forks.Unlock()
	cpus := m.acquire(r, cpu, trainersHere)
	if cpus != nil {
		m.applyLocked(running())
	}
	return cpus
}

// takeBack is release, then apply, with no role process starting meanwhile.
func (m *cpuManager) takeBack(r *runner, running func() map[*runner]int) {
	if m == nil {
		return
	}
	m.forks.Lock()
	defer m.forks.Unlock()
	m.release(r)
	m.applyLocked(running())
}

// release gives r's CPUs back to the shared ones.
func (m *cpuManager) release(r *runner) {
	if m == nil {
		return
	}
	m.mu.Lock()
	delete(m.given, r)
	m.mu.Unlock()
}

// exclusive is the CPUs r was given (none: it runs on the shared ones).
func (m *cpuManager) exclusive(r *runner) []int {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.given[r]
}

func (m *cpuManager) sharedLocked() []int {
	return slices.DeleteFunc(slices.Clone(m.pool), func(c int) bool {
		for _, cpus := range m.given {
			if slices.Contains(cpus, c) {
				return true
			}
		}
		return false
	})
}

// apply puts the agent's threads and every role process's (and their
// children's) on the shared CPUs, but the computing threads of the
// trainers with exclusive CPUs (those on their own CPUs now). running
// lists each running role's process by runner; it is read under m.forks,
// so that no role starts between the reading and the moving.
func (m *cpuManager) apply(running func() map[*runner]int) {
	if m == nil {
		return
	}
	m.forks.Lock()
	defer m.forks.Unlock()
	m.applyLocked(running())
}

// applyLocked is apply under m.forks: two applies at once could finish in
// the wrong order and leave threads on a CPU just given away.
func (m *cpuManager) applyLocked(running map[*runner]int) {
	m.mu.Lock()
	shared := m.sharedLocked()
	given := make(map[*runner][]int, len(m.given))
	for r, cpus := range m.given {
		given[r] = cpus
	}
	m.mu.Unlock()
	set := func(pid int, keep func([]int) bool) {
		if err := cpuaffinity.SetProcess(pid, shared, keep); err != nil {
			m.log.Warn("cannot move a process to the shared CPUs", "pid", pid, "cpus", cpuaffinity.Format(shared), "err", err)
		}
	}
	set(os.Getpid(), nil)
	for r, pid := range running {
		var keep func([]int) bool
		if own := given[r]; own != nil {
			keep = func(cur []int) bool { return cpuaffinity.Subset(cur, own) }
		}
		set(pid, keep)
		for _, p := range withDescendants(pid)[1:] {
			set(p, nil)
		}
	}
}

// withDescendants is pid and every process below it.
func withDescendants(pid int) []int {
	out := []int{pid}
	for i := 0; i < len(out) && i < 1000; i++ {
		out = append(out, cpuaffinity.Children(out[i])...)
	}
	return out
}

// keepApplying applies every cpuReconcile until ctx ends.
func (m *cpuManager) keepApplying(ctx context.Context, clk clock.Clock, running func() map[*runner]int) {
	if m == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-clk.After(cpuReconcile):
			m.apply(running)
		}
	}
}
