package trainer

import (
	"github.com/gtrain/gtrain/internal/cpuaffinity"
)

// Exclusive CPUs (the agent's --exclusive-cpus; daemon/supervisor, cpus.go):
// a trainer given Config.ComputeCPUs computes each micro-batch there and
// nowhere else (the records' copy into the batch included), while its
// network goroutines, the regions' copies and every other role of the
// node run on the shared CPUs. The built-in model's computing
// goroutines lock their threads and pin them for the computation
// (pinned). The agent gives a model program's trainer none (measured
// slower: daemon/supervisor, runner.go), and a trainer run by hand with
// them leaves its program where Linux runs it. The CPUs change where the
// arithmetic runs, never its order: the gradient's bits are the same.

// pinned pins the calling goroutine's thread to the compute CPUs until the
// returned function runs; without them it does nothing.
func (t *trainer) pinned() (unpin func()) {
	if len(t.cfg.ComputeCPUs) == 0 {
		return func() {}
	}
	restore, err := cpuaffinity.Pin(t.cfg.ComputeCPUs)
	if err == nil {
		t.pinnedOK.Store(true)
	}
	t.pinLogged.Do(func() {
		if err != nil {
			t.log.Warn("computing where Linux schedules it: its CPUs were refused", "err", err)
			return
		}
		t.log.Info("computing on CPUs of its own", "cpus", cpuaffinity.Format(t.cfg.ComputeCPUs))
	})
	return restore
}

// pinner is pinned for the model's threaded products (model.Options.Pin),
// or nil without compute CPUs.
func (t *trainer) pinner() func() func() {
	if len(t.cfg.ComputeCPUs) == 0 {
		return nil
	}
	return t.pinned
}
