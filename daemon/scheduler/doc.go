// Package scheduler places the cluster's jobs on its nodes. Every agent runs
// one; the one elected under coord.SchedulerElectionPrefix schedules, and
// every PlacementRecord it writes is fenced on that leadership, so a deposed
// scheduler changes nothing (scheduler.go).
//
// The decisions are pure and tested without etcd: placeJob (place.go) is
// the decision for one job (capacity, spread, the PENDING reason, fewer
// trainers down to an elastic job's min: mintrainers.go); schedule
// (plan.go) applies it to the whole cluster by priority, then in submit
// order, keeps a job that would take its owner over quota PENDING
// (quota.go), shrinks running elastic jobs of lower priority toward their
// min, at their next global checkpoint, for a job that does not fit
// (preempt.go), hands the
// workers that ask GPUs their own devices of their node (gpus.go), moves the
// workers of down and draining nodes (handover.go waits for a global
// checkpoint before it moves a draining node's workers, lostnode.go says
// what a lost node costs), drops scaled-down workers (scaledown.go), and
// drives the check that a job's checkpoint.dir is storage its nodes share
// (storagecheck.go; the agents answer it, see package supervisor). read.go
// decodes the cluster's jobs; compactor.go compacts etcd's history while
// this node leads. Submit never places: a job is written PENDING and placed
// when it fits.
//
// It owns placement. It must not start or stop processes (the supervisor
// follows the placement), serve the Control API, nor touch the etcd key
// layout or record encodings (coord owns them).
package scheduler
