package controlapi

import (
	"log/slog"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/daemon/supervisor"
	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/internal/sandbox"
)

// Timings of the Control API.
const (
	purgeTimeout = 30 * time.Second       // StopJob --purge waits this long for the workers to stop
	purgePoll    = 200 * time.Millisecond // and looks this often
	logPoll      = 200 * time.Millisecond // Logs -f looks for new lines this often
	logQuiet     = time.Second            // and ends this long after a finished job's last line
)

// Server is the gRPC Control API behind docs/reference.md#gctl. Every agent serves
// the whole cluster: from etcd, and Logs from every node's agent (logs.go).
type Server struct {
	api.UnimplementedControlServer
	cli     *clientv3.Client
	node    string
	dataDir string
	allowed []string // roots of every job's paths besides its spec's directory (paths.go)
	// programs runs the submit-time declare (program.go).
	programs sandbox.Policy
	sup      *supervisor.Supervisor
	peers    Gossip
	clock    clock.Clock
	log      *slog.Logger

	authz   *authorizer
	revoked *coord.Revocations // the bearer-token deny-list (revoke.go)
	// tokenMaxLifetime is how long a revocation must be kept (0: default).
	tokenMaxLifetime time.Duration
	peerCreds        credentials.TransportCredentials // dials other agents (log relay); nil is plaintext

	purgeTimeout, purgePoll time.Duration
	logPoll, logQuiet       time.Duration
	relayTimeout            time.Duration
}

// Gossip is what the Control API learns from the gossip ring: which nodes
// it declared down (the agent's members).
type Gossip interface {
	IsDown(node string) bool
}

// Config is what the Control API needs of the agent's configuration.
type Config struct {
	NodeName string
	DataDir  string
	// AllowedPaths are the absolute directories, besides DataDir and the
	// submitted spec file's own directory, that job specs may name paths under.
	AllowedPaths []string
	// TLSCA is the cluster CA's file: it verifies bearer tokens. "" (no
	// TLS): every caller is an anonymous admin if AllowAnonymous, else refused.
	TLSCA string
	// AllowAnonymous serves callers without credentials as the anonymous
	// admin: only an agent without TLS in --dev or --insecure mode.
	AllowAnonymous bool
	// TokenMaxLifetime is the longest exp-iat of a bearer token accepted;
	// 0 is auth.DefaultMaxLifetime.
	TokenMaxLifetime time.Duration
	// PeerCreds dial other agents (the log relay); nil is plaintext.
	PeerCreds credentials.TransportCredentials
	// RelayTimeout is how long the log relay waits on a silent agent
	// before it gives that node up with a notice; zero: 10 s.
	RelayTimeout time.Duration
	Log          *slog.Logger
	// Programs is how the submit-time declare runs a job's program: in the
	// node's sandbox, or refused (package internal/sandbox).
	Programs sandbox.Policy
}

// New is the Control API of this agent; register it on a gRPC server made
// with ServerOptions. It fails when the CA file cannot be read.
func New(cli *clientv3.Client, cfg Config, sup *supervisor.Supervisor, peers Gossip, clk clock.Clock) (*Server, error) {
	revoked := coord.NewRevocations(cli, cfg.Log)
	authz, err := newAuthorizer(cfg.TLSCA, cfg.AllowAnonymous, cfg.TokenMaxLifetime, revoked.Revoked, cfg.Log)
	if err != nil {
		return nil, err
	}
	if cfg.RelayTimeout == 0 {
		cfg.RelayTimeout = relayTimeout
	}
	return &Server{
		cli: cli, node: cfg.NodeName, dataDir: cfg.DataDir, allowed: append([]string{cfg.DataDir}, cfg.AllowedPaths...),
		sup: sup, peers: peers, clock: clock.Or(clk), log: cfg.Log, authz: authz, revoked: revoked, peerCreds: cfg.PeerCreds,
		tokenMaxLifetime: cfg.TokenMaxLifetime,
		purgeTimeout:     purgeTimeout, purgePoll: purgePoll, logPoll: logPoll, logQuiet: logQuiet,
		relayTimeout: cfg.RelayTimeout, programs: cfg.Programs,
	}, nil
}

// ServerOptions are the options a gRPC server serving c needs: the
// authorization checks and the message limits.
func (c *Server) ServerOptions() []grpc.ServerOption {
	return append(c.authz.serverOptions(), controlServerOptions()...)
}
