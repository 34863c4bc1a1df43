// Package jobdir owns where a job's files live on an agent:
//
//	<data-dir>/jobs/<job>/
//	    log/                 one <worker>.log per role process (the agent writes them)
//	    model/               the trained model the master exports
//	    checkpoints/         the pservers' checkpoints, unless the spec's checkpoint.dir moves them
//	    checkpoints/master/  the master's own checkpoints
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
