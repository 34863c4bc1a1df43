// Package fileperm is the one place that says with which modes the agent
// and the role processes create what belongs to a job: its directory, logs,
// checkpoints, model and placement markers. The agent usually runs as root
// and a job's data is its submitter's: other local users must not read it
// (issue 10), so directories are 0700 and files 0600, whatever the umask
// allows. Reading a model or a log goes through gctl (or root).
package fileperm

import "os"

const (
	// Dir is the mode of a job-owned directory.
	Dir os.FileMode = 0o700
	// File is the mode of a job-owned file.
	File os.FileMode = 0o600
)
