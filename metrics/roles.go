package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// latencyBuckets cover a push or pull of a small model on loopback (100 µs)
// to a large one across hosts (2.4 s, and +Inf above).
var latencyBuckets = prometheus.ExponentialBuckets(100e-6, 2.5, 12)

// computeBuckets cover a micro-batch's computation, from a small model's
// (1 ms) to a large program's (8 s, and +Inf above).
var computeBuckets = prometheus.ExponentialBuckets(1e-3, 2, 14)

// pauseBuckets cover the pserver's snapshot copy: microseconds for a small
// shard to a second for hundreds of MiB.
var pauseBuckets = prometheus.ExponentialBuckets(10e-6, 3, 12)

// Trainer records what a trainer process does.
type Trainer struct {
	steps, records      prometheus.Counter
	push, pull, compute prometheus.Histogram
	rowPulls            *prometheus.CounterVec
}

// Row pulls by when they ran (Trainer.RowsPulled).
const (
	RowsInStep      = "in_step"      // once the micro-batch's work was named
	RowsAhead       = "ahead"        // while the master answered the report before, and used
	RowsAheadUnused = "ahead_unused" // ahead, and dropped: the work named other records, step or layout
)

// NewTrainer registers a trainer's metrics in reg; nil reg: nil (records nothing).
func NewTrainer(reg prometheus.Registerer) *Trainer {
	if reg == nil {
		return nil
	}
	t := &Trainer{
		steps: prometheus.NewCounter(prometheus.CounterOpts{Name: "gtrain_trainer_steps_total",
			Help: "Gradients this trainer pushed (sync: global steps it took part in; async: minibatches)."}),
		records: prometheus.NewCounter(prometheus.CounterOpts{Name: "gtrain_trainer_records_total",
			Help: "Training records in the gradients this trainer pushed."}),
		push: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "gtrain_trainer_push_seconds",
			Help: "Latency of one gradient push to every pserver.", Buckets: latencyBuckets}),
		pull: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "gtrain_trainer_pull_seconds",
			Help: "Latency of one parameter pull from every pserver (waiting for the step included).", Buckets: latencyBuckets}),
		compute: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "gtrain_trainer_compute_seconds",
			Help: "Wall time of computing one micro-batch's gradient (async: minibatch): the built-in model's forward and backward pass, or the program's request. Its rate is the share of the trainer's time spent computing; the push overlaps it, and an early micro-batch dropped later counts too.", Buckets: computeBuckets}),
		rowPulls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gtrain_trainer_row_pulls_total",
			Help: "Pulls of a micro-batch's embedding rows (models with tables), by when: in_step (after the master named the work), ahead (while the master answered the report of the step before; saves a round trip a step), ahead_unused (pulled ahead, then dropped: the next work named other records, another step or epoch, or the pservers' layout changed)."},
			[]string{"when"}),
	}
	reg.MustRegister(t.steps, t.records, t.push, t.pull, t.compute, t.rowPulls)
	return t
}

// RowsPulled counts a micro-batch's row pull; when is RowsInStep,
// RowsAhead or RowsAheadUnused.
func (t *Trainer) RowsPulled(when string) {
	if t == nil {
		return
	}
	t.rowPulls.WithLabelValues(when).Inc()
}

// Pushed records a push of records that took d; ok false: it failed (only the latency counts).
func (t *Trainer) Pushed(d time.Duration, records int64, ok bool) {
	if t == nil {
		return
	}
	t.push.Observe(d.Seconds())
	if ok {
		t.steps.Inc()
		t.records.Add(float64(records))
	}
}

// Computed records a micro-batch's gradient that took d to compute.
func (t *Trainer) Computed(d time.Duration) {
	if t == nil {
		return
	}
	t.compute.Observe(d.Seconds())
}

// Pulled records a pull that took d.
func (t *Trainer) Pulled(d time.Duration) {
	if t == nil {
		return
	}
	t.pull.Observe(d.Seconds())
}

// Pserver records a pserver's checkpoints.
type Pserver struct {
	pause, write prometheus.Histogram
	failed       prometheus.Counter
}

// NewPserver registers a pserver's metrics in reg; step reads the shard's
// applied step count. nil reg: nil.
func NewPserver(reg prometheus.Registerer, step func() int64) *Pserver {
	if reg == nil {
		return nil
	}
	p := &Pserver{
		pause: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "gtrain_pserver_checkpoint_pause_seconds",
			Help: "Time the pserver held a step for a checkpoint: copying values the step changed before they were written, and waiting for the disk.", Buckets: pauseBuckets}),
		write: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "gtrain_pserver_checkpoint_seconds",
			Help: "Time to write one checkpoint of the shard (in the background).", Buckets: latencyBuckets}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{Name: "gtrain_pserver_checkpoint_failures_total",
			Help: "Checkpoint writes that failed (training goes on)."}),
	}
	stepGauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gtrain_pserver_step",
		Help: "Steps this pserver's shard has applied (goes back on a rollback)."}, func() float64 { return float64(step()) })
	reg.MustRegister(p.pause, p.write, p.failed, stepGauge)
	return p
}

// Checkpointed records a checkpoint that paused serving for pause and took
// write to write; ok false: the write failed.
func (p *Pserver) Checkpointed(pause, write time.Duration, ok bool) {
	if p == nil {
		return
	}
	p.pause.Observe(pause.Seconds())
	if !ok {
		p.failed.Inc()
		return
	}
	p.write.Observe(write.Seconds())
}

// MasterView is what the master's metrics read at each scrape.
type MasterView interface {
	Position() (pass int, step int64)
	Epoch() int64 // sync: rollbacks so far
}

// RegisterMaster registers the master's metrics, read from v at each
// scrape; nil reg does nothing.
func RegisterMaster(reg prometheus.Registerer, v MasterView) {
	if reg == nil {
		return
	}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gtrain_master_pass", Help: "Passes finished."},
			func() float64 { p, _ := v.Position(); return float64(p) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gtrain_master_step", Help: "Global steps committed (async: minibatches reported)."},
			func() float64 { _, s := v.Position(); return float64(s) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "gtrain_master_rollbacks_total", Help: "Rollbacks of the job to a global checkpoint (sync)."},
			func() float64 { return float64(v.Epoch()) }),
	)
}
