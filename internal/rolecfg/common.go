package rolecfg

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gtrain/gtrain/internal/confine"
	"github.com/gtrain/gtrain/internal/jobauth"
	"github.com/gtrain/gtrain/internal/sandbox"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pki"
	"github.com/prometheus/client_golang/prometheus"
)

// Common is what every role's Config holds: which job it serves, where, and
// what it logs and records to. master.Config, pserver.Config and
// trainer.Config embed it.
type Common struct {
	Job  string
	Node string // the node it runs on, for status
	// JobRev is the create revision of the job record the role serves (the
	// agent passes it); the role refuses to run for another record. 0 takes
	// the record found.
	JobRev int64
	// SessionTTL is in seconds: the role's etcd lease, and with it its
	// registration, dies this long after the process.
	SessionTTL int
	// TLS is the node certificate the role serves and dials with (mutual
	// TLS); the zero value is plaintext.
	TLS pki.Files
	// JobCredential is the file of the job's data-plane secret ("": none;
	// package jobauth).
	JobCredential string
	Log           *slog.Logger
	// Metrics is where the role records its metrics (nil: nowhere).
	Metrics prometheus.Registerer
	// Programs is how the role runs a model program (the zero value, in
	// tests that build a Config by hand: with the role's rights).
	Programs sandbox.Policy
	// AllowedPaths is the agent's --allowed-path: with its data dir and the
	// job's own directories, the roots of Roots.
	AllowedPaths []string
}

// Roots are the directories the role opens its job's paths beneath
// (confine.Roots.Open): the agent's allowed paths and data dir, resolved
// here (the admin's), and the job's own directories as submit resolved them
// (data.train's and data.test's literal directories, checkpoint.dir,
// model.workspace, init_from.dir, the pass init_from.resolved pins), taken
// as they are: a symlink put in
// their place since is not followed (README "Confined paths and limits").
func (c Common) Roots(dataDir string, spec *jobspec.Spec) (confine.Roots, error) {
	return JobRoots(c.AllowedPaths, dataDir, spec)
}

// JobRoots are the roots of Common.Roots for an agent that allows allowed
// and keeps its files in dataDir: the agent opens a job's files (its
// model, for gctl job model; its checkpoint.dir's markers) beneath them too.
func JobRoots(allowed []string, dataDir string, spec *jobspec.Spec) (confine.Roots, error) {
	roots, err := confine.NewRoots(append(slices.Clone(allowed), dataDir)...)
	if err != nil {
		return confine.Roots{}, err
	}
	for _, f := range spec.PathFields() {
		dir := *f.Path
		if f.Glob && dir != "" {
			dir = confine.GlobDir(dir)
		}
		if filepath.IsAbs(dir) {
			roots = roots.With(filepath.Clean(dir))
		}
	}
	if r := spec.InitFrom.Resolved; filepath.IsAbs(r) { // another job's pass, pinned at submit
		roots = roots.With(filepath.Clean(r))
	}
	return roots, nil
}

// DataPlane is the role's side of its job's data plane: its TLS files and
// the job's secret read from JobCredential.
func (c Common) DataPlane() (jobauth.Role, error) {
	return jobauth.LoadRole(c.TLS, c.Job, c.JobCredential)
}

// Validate names the bad field; role prefixes the message.
func (c Common) Validate(role string) error {
	switch {
	case c.Job == "":
		return errors.New(role + ": Job must be set")
	case c.SessionTTL < 1:
		return fmt.Errorf("%s: SessionTTL must be >= 1, got %d", role, c.SessionTTL)
	}
	return nil
}

// Common is what a's role holds of its command line, with its log and
// where it records its metrics.
func (a Args) Common(log *slog.Logger, metrics prometheus.Registerer) Common {
	return Common{Job: a.Job, Node: a.Node, JobRev: a.JobRev, SessionTTL: a.SessionTTL, TLS: a.TLS,
		JobCredential: a.JobCredential, Log: log, Metrics: metrics, AllowedPaths: a.AllowedPaths,
		Programs: ProgramPolicy(a.AllowUnisolatedPrograms, a.DataDir, a.TLS, a.Etcd.Key, a.AgentConfig, a.GossipKeyFile)}
}

// ProgramPolicy is how a process of the agent (the agent's declare at
// submit, a role) runs model programs: isolated when the node can
// (sandbox.Decide), hiding the data dir, /etc/gtrain, the agent's config
// file (configFile), and the key files (the node's TLS and etcd keys, the
// gossip key) with the directory of each, where a CA key or another
// node's key may lie. An empty path is none.
func ProgramPolicy(allowUnisolated bool, dataDir string, tls pki.Files, etcdKey, configFile, gossipKey string) sandbox.Policy {
	mode, reason := sandbox.Decide(allowUnisolated)
	p := sandbox.Policy{Mode: mode, Reason: reason, DataDir: dataDir, Hide: []string{ConfigDir}}
	if configFile != "" {
		p.Hide = append(p.Hide, configFile) // the file only: its directory may be /etc
	}
	for _, k := range []string{tls.Key, etcdKey, gossipKey} {
		if k == "" {
			continue
		}
		p.Hide = append(p.Hide, k)
		if d := filepath.Dir(k); keyDirCoverable(d) {
			p.Hide = append(p.Hide, d)
		}
	}
	return p
}

// ConfigDir is where a deployment keeps the agent's settings and keys
// (deploy/systemd): covered in every program's view.
const ConfigDir = "/etc/gtrain"

// keyDirCoverable says whether a key file's directory may be covered
// whole: not a top-level directory nor one of the system's shared ones,
// which programs need (covering /etc would take /etc/passwd and the
// loader's cache with it); a key lying there is covered as a file only.
func keyDirCoverable(dir string) bool {
	dir = filepath.Clean(dir)
	if strings.Count(dir, "/") < 2 {
		return false
	}
	for _, shared := range []string{"/etc/ssl", "/etc/pki", "/usr/lib", "/usr/local", "/usr/share", "/var/lib", "/run/user"} {
		if dir == shared {
			return false
		}
	}
	return true
}
