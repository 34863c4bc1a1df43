package supervisor

import (
	"log/slog"
	"time"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/pki"
)

// Config is what the supervisor needs of the agent's configuration; the
// agent fills it (daemon.Config holds the flags).
type Config struct {
	NodeName string
	DataDir  string
	// StopGrace is how long a role gets to exit after being asked to.
	StopGrace time.Duration
	Log       *slog.Logger

	// How roles are started (role.go).
	Exe  string           // the gtraind binary the roles run with
	Etcd coord.EtcdConfig // the members the agent reached, and its credentials
	// AdvertiseAddr is the host the master and pservers bind (port 0) and
	// publish: an address of this node the other nodes can reach.
	AdvertiseAddr string
	TLS           pki.Files // this node's certificate, for the roles' RPCs
	Metrics       bool      // roles serve their metrics for the agent's /metrics
	// AllowUnisolatedPrograms is passed to the roles: the agent's
	// --allow-unisolated-programs (package internal/sandbox).
	AllowUnisolatedPrograms bool
	// AllowedPaths is the agent's --allowed-path, passed to the roles: the
	// roots, with the data dir and the job's own directories, they open
	// the job's paths beneath.
	AllowedPaths []string
	// ConfigFile and GossipKeyFile are the agent's --config file and
	// gossip key file, passed to the roles to hide from their programs.
	ConfigFile, GossipKeyFile string
	// ExclusiveCPUs is the agent's --exclusive-cpus: a trainer asking
	// whole CPUs computes on CPUs no other role thread runs on (cpus.go).
	ExclusiveCPUs bool
}
