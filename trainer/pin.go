package trainer

import (
	"github.com/gtrain/gtrain/internal/cpuaffinity"
)

// Exclusive CPUs (the agent's --exclusive-cpus; daemon/supervisor, cpus.go):
// a trainer given Config.ComputeCPUs computes each micro-batch there and
// nowhere else (the records' copy into the batch included), while its
// network goroutines, the regions' copies and every other role of the
// node run on the shared CPUs. The built-in model's micro-batches compute
// on one goroutine whose thread stays pinned there for the trainer's life
// (computeThread); a threaded product's other goroutines lock their threads
// and pin them for the product (pinned). The agent gives a model program's trainer none (measured
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

// computeThread runs a built-in model's micro-batches, one at a time, on a
// goroutine locked to an OS thread that stays pinned to the compute CPUs
// until the trainer ends. Pinning the computing goroutine's thread for each
// micro-batch and unpinning it after cost the step 1-2 ms on the 2-core
// Zen 4 VM (probe, 2026-11-29: the unpin 0.5-0.8 ms, then 0.65-0.9 ms
// before the goroutine ran again): each change of CPUs moves the thread,
// and the shared CPU it went back to was busy with the pservers' apply
// just then, the moment the next micro-batch waits for.
type computeThread struct {
	work chan func()
}

// startComputeThread starts t's compute thread when it has compute CPUs
// and a built-in model, and returns what stops it (its thread's CPUs put
// back); without, it starts nothing.
func (t *trainer) startComputeThread() (stop func()) {
	if len(t.cfg.ComputeCPUs) == 0 || t.prog != nil || t.computer != nil {
		return func() {}
	}
	ct := &computeThread{work: make(chan func())}
	go func() {
		defer t.pinned()()
		for f := range ct.work {
			f()
		}
	}()
	t.computer = ct
	return func() { close(ct.work) } // every computation has returned: runSync waits for an early one
}

// run runs f on the compute thread and returns once it returned; without
// one (nil: no compute CPUs, or a model program), on the calling goroutine.
func (ct *computeThread) run(f func()) {
	if ct == nil {
		f()
		return
	}
	done := make(chan struct{})
	ct.work <- func() {
		defer close(done)
		f()
	}
	<-done
}
