package jobdir

import (
	"path/filepath"

	"github.com/gtrain/gtrain/jobspec"
)

// Root is the directory of everything an agent keeps for job.
func Root(dataDir, job string) string { return filepath.Join(dataDir, "jobs", job) }

// Log holds the log files of job's role processes.
func Log(dataDir, job string) string { return filepath.Join(Root(dataDir, job), "log") }

// WorkerLog is the log file of one role process (worker) of job.
func WorkerLog(dataDir, job, worker string) string {
	return filepath.Join(Log(dataDir, job), worker+".log")
}

// Model holds the model the master exports for spec's job. With the spec's
// checkpoint.dir set (shared storage, required for multi-node jobs) it is
// there too, in a directory of the job's own, so that a master re-placed on
// another node goes on writing the same model and two jobs sharing the
// checkpoint directory keep apart; else it is under the agent's data dir.
func Model(dataDir string, spec *jobspec.Spec) string {
	if spec.Checkpoint.Dir != "" {
		return filepath.Join(spec.Checkpoint.Dir, "model", spec.Name)
	}
	return filepath.Join(Root(dataDir, spec.Name), "model")
}

// Checkpoints holds the pservers' checkpoints of spec's job: the spec's
// checkpoint.dir when set (shared storage for multi-node jobs), else a
// directory under the agent's data dir.
func Checkpoints(dataDir string, spec *jobspec.Spec) string {
	if spec.Checkpoint.Dir != "" {
		return spec.Checkpoint.Dir
	}
	return filepath.Join(Root(dataDir, spec.Name), "checkpoints")
}

// MasterCheckpoints holds the master's checkpoints of spec's job, beside the
// pservers' so that shared storage covers both.
func MasterCheckpoints(dataDir string, spec *jobspec.Spec) string {
	return filepath.Join(Checkpoints(dataDir, spec), "master")
}

// MetricsAddr is the file in which a role process of job started with
// --metrics-file writes the loopback address of its metrics, for the
// agent's /metrics to scrape.
func MetricsAddr(dataDir, job, worker string) string {
	return filepath.Join(Root(dataDir, job), "metrics", worker+".addr")
}

// Credential is the file (0600) in which the agent keeps job's data-plane
// secret for the job's roles on this node (package jobauth); its path, not
// the secret, is on their command lines.
func Credential(dataDir, job string) string { return filepath.Join(Root(dataDir, job), "credential") }
