package jobspec

import "github.com/gtrain/gtrain/model"

// Defaults filled by ApplyDefaults.
const (
	DefaultMode            = ModeSync
	DefaultTrainers        = 1
	DefaultPservers        = 1
	DefaultPasses          = 1
	DefaultBatchSize       = 20
	DefaultSeed            = 1
	DefaultOptimizer       = OptimizerSGD
	DefaultLearningRate    = 0.01
	DefaultMomentum        = 0.9
	DefaultBeta1           = 0.9
	DefaultBeta2           = 0.999
	DefaultEpsilon         = 1e-8
	DefaultChunksPerTask   = 1
	DefaultCheckpointEvery = "10s"
	DefaultCheckpointKeep  = 3
)

// ApplyDefaults fills the fields left at their zero value. It never changes a
// value that was set, so an explicit negative count stays for Validate to
// reject. A written 0 is told from an omitted field before this runs: Parse
// rejects a zero count, learning rate or epsilon (checkWritten), and momentum
// is a pointer, so momentum 0 stays 0. An explicit 0 seed, beta1 or beta2
// still becomes the default. Applying it twice changes nothing.
func (s *Spec) ApplyDefaults() {
	setString(&s.Mode, DefaultMode)
	setInt(&s.Trainers, DefaultTrainers)
	setInt(&s.Pservers, DefaultPservers)
	setInt(&s.Passes, DefaultPasses)
	setInt(&s.BatchSize, DefaultBatchSize)
	if s.Seed == 0 {
		s.Seed = DefaultSeed
	}
	if s.Model.Kind == model.KindLinear {
		setInt(&s.Model.Outputs, 1)
	}
	o := &s.Optimizer
	setString(&o.Kind, DefaultOptimizer)
	setFloat(&o.LearningRate, DefaultLearningRate)
	if o.Momentum == nil {
		o.Momentum = new(float64(DefaultMomentum))
	}
	setFloat(&o.Beta1, DefaultBeta1)
	setFloat(&o.Beta2, DefaultBeta2)
	setFloat(&o.Epsilon, DefaultEpsilon)
	setInt(&s.Data.ChunksPerTask, DefaultChunksPerTask)
	setString(&s.Checkpoint.Every, DefaultCheckpointEvery)
	setInt(&s.Checkpoint.Keep, DefaultCheckpointKeep)
	setInt(&s.Restarts.Limit, DefaultRestartLimit)
	setString(&s.Restarts.Window, DefaultRestartWindow)
	setString(&s.Restarts.HungAfter, DefaultHungAfter)
}

func setString[S ~string](v *S, def S) {
	if *v == "" {
		*v = def
	}
}

func setInt(v *int, def int) {
	if *v == 0 {
		*v = def
	}
}

func setFloat(v *float64, def float64) {
	if *v == 0 {
		*v = def
	}
}
