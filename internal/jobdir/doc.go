// Package jobdir owns where a job's files live on an agent:
//
//	<data-dir>/jobs/<job>/
//	    log/                 one <worker>.log per role process (the agent writes them)
//	    metrics/             one <worker>.addr per role process serving metrics (package metrics)
//	    model/               the trained model the master exports
//	    checkpoints/         the pservers' checkpoints
//	    checkpoints/master/  the master's own checkpoints
//
// unless the spec sets checkpoint.dir (shared storage, which every node of a
// multi-node job reads), which moves all but the logs there:
//
//	<checkpoint.dir>/               the pservers' checkpoints
//	<checkpoint.dir>/master/        the master's own checkpoints
//	<checkpoint.dir>/model/<job>/   the trained model
//
// Jobs may share a checkpoint.dir: checkpoint file names carry the job's
// identity, and each job's model has its own directory.
//
// Every role derives these paths here instead of joining "jobs" itself, so
// the layout changes in one place. Deleting Root forgets the job on this agent.
//
// It is pure path arithmetic: it must not create, read or remove files, nor
// know what goes into them (checkpoint owns the file names inside
// checkpoints/, the daemon owns the log files).
//
// It lives apart from jobspec, whose doc forbids it to know how a job is run,
// and below every role package, so the daemon, the master and the pserver can
// all import it without importing each other.
package jobdir
