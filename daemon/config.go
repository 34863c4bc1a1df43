package daemon

import (
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/daemon/controlapi"
	"github.com/gtrain/gtrain/daemon/scheduler"
	"github.com/gtrain/gtrain/daemon/supervisor"
	"github.com/gtrain/gtrain/pki"
	"google.golang.org/grpc/credentials"
)

// Defaults of docs/reference.md#gtraind-agent and of the supervisor.
const (
	DefaultDataDir        = "/var/lib/gtrain"
	DefaultAPIAddr        = "127.0.0.1:7164"
	DefaultGossipAddr     = "127.0.0.1:7946"
	DefaultEtcdClientAddr = "127.0.0.1:2379"
	DefaultEtcdPeerAddr   = "127.0.0.1:2380"
	// DefaultSessionTTL (seconds): a dead agent's lease, and with it its
	// node, ends within this (plus etcd's half-second expiry check), so a
	// crashed node shows down within 5 s (cluster issue).
	DefaultSessionTTL = 4
	DefaultStopGrace  = 10 * time.Second
	// etcdTimeout bounds the agent's own etcd calls at start and stop, so
	// that a dead etcd cannot keep it from starting or stopping.
	etcdTimeout = 5 * time.Second
)

// Config is everything `gtraind agent` needs; cmd/gtraind fills it from
// flags, the config file and the environment. Zero durations and counts
// mean the defaults above.
type Config struct {
	DataDir    string
	NodeName   string
	APIAddr    string // host:port of the Control API (port 0 picks a free port), or unix:///PATH
	GossipAddr string // host:port of the gossip ring; port 0 picks a free port
	Join       []string
	// EtcdEndpoints names an existing etcd cluster (not with Dev).
	EtcdEndpoints []string
	// Dev starts an embedded single-member etcd under DataDir/etcd.
	Dev            bool
	EtcdClientAddr string // with Dev
	EtcdPeerAddr   string // with Dev
	SessionTTL     int    // seconds the node record outlives a silent agent
	// StopGrace is how long a role gets to exit after being asked to.
	StopGrace time.Duration
	// CompactEvery and CompactRetain: the scheduler compacts etcd's history
	// this often, keeping this much (scheduler.DefaultCompactEvery, scheduler.DefaultCompactRetain).
	CompactEvery, CompactRetain time.Duration
	// LogRelayTimeout is how long `gctl job logs` waits on a silent agent
	// before it gives that node's logs up with a notice; zero: 10 s.
	LogRelayTimeout time.Duration
	// Cluster across hosts (cluster issue).
	//
	// AdvertiseAddr is the host (no port) this node's master and pservers
	// bind and publish, and that a wildcard --api-addr or --gossip-addr is
	// published as: an address the other nodes reach. "" is the host of
	// APIAddr, or this host's first non-loopback address when APIAddr's
	// host is a wildcard.
	AdvertiseAddr string
	// How to get into the EtcdEndpoints cluster: TLS files (PEM) and a user.
	// The password reaches role processes through their environment.
	EtcdCACert, EtcdCert, EtcdKey string
	EtcdUser, EtcdPassword        string
	// Transport security (issue 10). TLS (all three files or none) makes the
	// Control API, the log relay and the roles' RPCs mutual TLS with this
	// node's certificate; its CA also verifies bearer tokens, and without
	// TLS every caller of the Control API is an anonymous admin. GossipKey (16, 24 or 32 bytes) encrypts gossip.
	// Insecure allows a non-loopback APIAddr (and UIAddr) without TLS.
	TLS       pki.Files
	GossipKey []byte
	Insecure  bool
	// TokenMaxLifetime (--token-max-lifetime) is the longest life (exp -
	// iat) of a bearer token the agent accepts; 0 is auth.DefaultMaxLifetime.
	TokenMaxLifetime time.Duration

	// AllowedPaths (--allowed-path) are the directories, besides DataDir
	// and the submitted spec file's own directory, that job specs may name
	// data, checkpoint and model paths under.
	AllowedPaths []string

	// AllowUnisolatedPrograms (--allow-unisolated-programs) runs model
	// programs with the agent's rights on a node that cannot isolate them
	// (not root, no cgroup controllers); without it such a node refuses
	// program jobs (programs.go).
	AllowUnisolatedPrograms bool
	// ExclusiveCPUs (--exclusive-cpus) gives a trainer asking whole CPUs
	// CPUs of this node for its computation alone (supervisor, cpus.go).
	ExclusiveCPUs bool
	// ConfigFile (--config) and GossipKeyFile (--gossip-key @FILE) are
	// the agent's files that model programs must not see (programs.go);
	// the roles are told them for their programs' sandboxes.
	ConfigFile, GossipKeyFile string

	// Exe is the binary the roles run with; default the running executable.
	Exe string
	Log *slog.Logger

	// Capacity this node offers to placement (docs/reference.md#gtraind-agent --cpu, --memory,
	// --gpus, --labels). CPU and Memory 0 mean the machine's (detected);
	// GPUs < 0 means detected (the /dev/nvidiaN devices), 0 none.
	CPU    float64
	Memory int64 // bytes
	GPUs   int
	Labels map[string]string

	// MetricsAddr (--metrics-addr HOST:PORT) serves Prometheus /metrics
	// over plain HTTP (see package metrics); "" serves none.
	MetricsAddr string

	// UIAddr (--ui-addr HOST:PORT) serves the web console (package
	// daemon/console): HTTPS with TLS, where visitors log in with a bearer
	// token; "" serves none.
	UIAddr string
}

// DefaultConfig is the configuration of docs/reference.md#gtraind-agent before flags apply.
func DefaultConfig() Config {
	name, err := os.Hostname()
	if err != nil || name == "" {
		name = "localhost"
	}
	return Config{
		DataDir:        DefaultDataDir,
		NodeName:       name,
		APIAddr:        DefaultAPIAddr,
		GossipAddr:     DefaultGossipAddr,
		EtcdClientAddr: DefaultEtcdClientAddr,
		EtcdPeerAddr:   DefaultEtcdPeerAddr,
		SessionTTL:     DefaultSessionTTL,
		StopGrace:      DefaultStopGrace,
		GPUs:           -1,
	}
}

// Validate checks the config and names the first bad field with the flag
// that sets it.
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
	}
	if strings.TrimSpace(c.DataDir) == "" {
		return bad("DataDir (--data-dir) is empty: give a directory for job logs and checkpoints")
	}
	if err := validateNodeName(c.NodeName); err != nil {
		return bad("NodeName (--node-name) %q: %v", c.NodeName, err)
	}
	for _, a := range []struct{ field, flag, addr string }{
		{"APIAddr", "--api-addr", c.APIAddr},
		{"GossipAddr", "--gossip-addr", c.GossipAddr},
	} {
		if _, unix := apiSocket(a.addr); unix && a.field == "APIAddr" {
			if err := validateAPISocket(a.addr); err != nil {
				return bad("%v", err)
			}
			continue
		}
		if _, _, err := net.SplitHostPort(a.addr); err != nil {
			return bad("%s (%s) %q is not HOST:PORT: %v", a.field, a.flag, a.addr, err)
		}
	}
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			return bad("MetricsAddr (--metrics-addr) %q is not HOST:PORT: %v", c.MetricsAddr, err)
		}
	}
	if c.UIAddr != "" {
		if _, _, err := net.SplitHostPort(c.UIAddr); err != nil {
			return bad("UIAddr (--ui-addr) %q is not HOST:PORT: %v", c.UIAddr, err)
		}
	}
	for _, j := range c.Join {
		if _, _, err := net.SplitHostPort(j); err != nil {
			return bad("Join (--join) entry %q is not HOST:PORT: %v", j, err)
		}
	}
	switch {
	case c.Dev && len(c.EtcdEndpoints) > 0:
		return bad("Dev (--dev) and EtcdEndpoints (--etcd-endpoints %s) both given: --dev starts its own etcd; pass one or the other",
			strings.Join(c.EtcdEndpoints, ","))
	case !c.Dev && len(c.EtcdEndpoints) == 0:
		return bad("EtcdEndpoints is empty: pass --etcd-endpoints HOST:PORT,... to use an etcd cluster, or --dev for an embedded single-node etcd")
	}
	if err := c.validateCluster(); err != nil {
		return bad("%v", err)
	}
	if err := c.validateTLS(); err != nil {
		return bad("%v", err)
	}
	if err := checkKeyFiles(c); err != nil {
		return err
	}
	if c.Dev {
		for _, a := range []struct{ field, flag, addr string }{
			{"EtcdClientAddr", "--etcd-client-addr", c.EtcdClientAddr},
			{"EtcdPeerAddr", "--etcd-peer-addr", c.EtcdPeerAddr},
		} {
			if _, _, err := net.SplitHostPort(a.addr); err != nil {
				return bad("%s (%s) %q is not HOST:PORT: %v", a.field, a.flag, a.addr, err)
			}
		}
	}
	for _, n := range []struct {
		field string
		v     int64
	}{
		{"SessionTTL", int64(c.SessionTTL)},
		{"StopGrace", int64(c.StopGrace)},
		{"CompactEvery", int64(c.CompactEvery)},
		{"CompactRetain", int64(c.CompactRetain)},
		{"TokenMaxLifetime (--token-max-lifetime)", int64(c.TokenMaxLifetime)},
	} {
		if n.v < 0 {
			return bad("%s is negative (%d); use 0 for the default", n.field, n.v)
		}
	}
	return c.validateCapacity()
}

// validateCapacity checks the capacity fields, naming their flags.
func (c Config) validateCapacity() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
	}
	if !(c.CPU >= 0) || math.IsInf(c.CPU, 0) {
		return bad("CPU (--cpu) %v: want a number of CPUs >= 0 (0 = detect)", c.CPU)
	}
	if c.Memory < 0 {
		return bad("Memory (--memory) %d: want bytes >= 0 (0 = detect)", c.Memory)
	}
	for k, v := range c.Labels {
		if k == "" || strings.ContainsAny(k, "=, \t\n") || strings.ContainsAny(v, ", \t\n") {
			return bad("Labels (--labels) %q=%q: want key=value pairs separated by commas, keys non-empty, no spaces", k, v)
		}
	}
	return nil
}

// validateCluster checks the advertise address and the etcd access.
func (c Config) validateCluster() error {
	if c.AdvertiseAddr != "" {
		if _, _, err := net.SplitHostPort(c.AdvertiseAddr); err == nil {
			return fmt.Errorf("AdvertiseAddr (--advertise-addr) %q has a port: give the host only; roles pick free ports", c.AdvertiseAddr)
		}
		if IsWildcardHost(c.AdvertiseAddr) {
			return fmt.Errorf("AdvertiseAddr (--advertise-addr) %q is a wildcard: give an address of this host the other nodes reach", c.AdvertiseAddr)
		}
	}
	etcd := c.etcdConfig()
	if c.Dev {
		if etcd.TLS() || etcd.User != "" || etcd.Password != "" {
			return fmt.Errorf("--etcd-cacert/--etcd-cert/--etcd-key/--etcd-user/--etcd-password are for --etcd-endpoints; --dev's embedded etcd is plain, on loopback")
		}
		return nil
	}
	if err := etcd.Validate(); err != nil {
		return err
	}
	return nil
}

// etcdConfig is the agent's access to EtcdEndpoints.
func (c Config) etcdConfig() coord.EtcdConfig {
	return coord.EtcdConfig{Endpoints: c.EtcdEndpoints, CACert: c.EtcdCACert, Cert: c.EtcdCert, Key: c.EtcdKey,
		User: c.EtcdUser, Password: c.EtcdPassword}
}

// validateNodeName keeps node names usable as one etcd key segment and as a
// gossip member name.
func validateNodeName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty")
	case len(name) > 253:
		return fmt.Errorf("%d characters, at most 253", len(name))
	}
	for i, r := range name {
		if r <= ' ' || r == '/' || r > '~' {
			return fmt.Errorf("character %q at byte %d: use letters, digits, '-' and '.' (a host name)", r, i)
		}
	}
	return nil
}

// withDefaults fills zero fields and makes DataDir absolute, because roles
// receive it on their command line and may not share the agent's working
// directory.
func (c Config) withDefaults() (Config, error) {
	if c.SessionTTL == 0 {
		c.SessionTTL = DefaultSessionTTL
	}
	if c.StopGrace == 0 {
		c.StopGrace = DefaultStopGrace
	}
	if c.CompactEvery == 0 {
		c.CompactEvery = scheduler.DefaultCompactEvery
	}
	if c.CompactRetain == 0 {
		c.CompactRetain = scheduler.DefaultCompactRetain
	}
	if c.CPU == 0 {
		c.CPU = float64(runtime.NumCPU())
	}
	if c.Memory == 0 {
		c.Memory = totalMemory()
	}
	if c.GPUs < 0 {
		c.GPUs = detectGPUs()
	}
	if c.Exe == "" {
		exe, err := os.Executable()
		if err != nil {
			return c, fmt.Errorf("%w: Exe is empty and the running executable is unknown: %v", ErrInvalidConfig, err)
		}
		c.Exe = exe
	}
	abs, err := filepath.Abs(c.DataDir)
	if err != nil {
		return c, fmt.Errorf("%w: DataDir (--data-dir) %q: %v", ErrInvalidConfig, c.DataDir, err)
	}
	c.DataDir = abs
	if c.TLS, err = c.TLS.Abs(); err != nil { // the roles get these paths
		return c, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	if c.AllowedPaths, err = absPaths(c.AllowedPaths); err != nil {
		return c, err
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// capacity is what the node registers for placement. Call it on a config
// that withDefaults filled.
func (c Config) capacity() schema.Capacity {
	return schema.Capacity{CPU: c.CPU, Memory: c.Memory, GPUs: max(c.GPUs, 0), Labels: c.Labels}
}

// nvidiaDevice is a GPU's device node (/dev/nvidia0); /dev/nvidiactl and
// /dev/nvidia-uvm are not GPUs.
var nvidiaDevice = regexp.MustCompile(`^nvidia[0-9]+$`)

// detectGPUs counts the NVIDIA GPUs the driver exposes; 0 without one.
func detectGPUs() int {
	entries, err := os.ReadDir("/dev")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if nvidiaDevice.MatchString(e.Name()) {
			n++
		}
	}
	return n
}

// absPaths makes the --allowed-path directories absolute, because the
// roots are compared with absolute paths.
func absPaths(dirs []string) ([]string, error) {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if d == "" {
			return nil, fmt.Errorf("%w: AllowedPaths (--allowed-path) has an empty entry: give a directory", ErrInvalidConfig)
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("%w: AllowedPaths (--allowed-path) %q: %v", ErrInvalidConfig, d, err)
		}
		out = append(out, abs)
	}
	return out, nil
}

// supervisorConfig is what the supervisor needs; endpoints are the etcd
// members the agent reached (the roles get the same).
func (c Config) supervisorConfig(endpoints []string) supervisor.Config {
	etcd := c.etcdConfig()
	etcd.Endpoints = endpoints
	return supervisor.Config{NodeName: c.NodeName, DataDir: c.DataDir, StopGrace: c.StopGrace, Log: c.Log,
		Exe: c.Exe, Etcd: etcd, AdvertiseAddr: c.AdvertiseAddr, TLS: c.TLS, Metrics: c.MetricsAddr != "",
		AllowUnisolatedPrograms: c.AllowUnisolatedPrograms, AllowedPaths: c.AllowedPaths, ConfigFile: c.ConfigFile, GossipKeyFile: c.GossipKeyFile,
		ExclusiveCPUs: c.ExclusiveCPUs}
}

// schedulerConfig is what the scheduler needs.
func (c Config) schedulerConfig() scheduler.Config {
	return scheduler.Config{NodeName: c.NodeName, SessionTTL: c.SessionTTL,
		CompactEvery: c.CompactEvery, CompactRetain: c.CompactRetain, Log: c.Log}
}

// controlConfig is what the Control API needs; peerCreds dial the other
// agents for the log relay.
func (c Config) controlConfig(peerCreds credentials.TransportCredentials) controlapi.Config {
	return controlapi.Config{NodeName: c.NodeName, DataDir: c.DataDir, AllowedPaths: c.AllowedPaths,
		TLSCA: c.TLS.CA, AllowAnonymous: c.AllowAnonymous(), TokenMaxLifetime: c.TokenMaxLifetime, PeerCreds: peerCreds, RelayTimeout: c.LogRelayTimeout, Log: c.Log,
		Programs: c.programPolicy()}
}
