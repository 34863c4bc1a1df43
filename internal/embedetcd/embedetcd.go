// Package embedetcd starts a single-member etcd inside this process and
// waits until it serves. It is the one place that configures such a member:
// coord uses it for `gtraind agent --dev`, internal/testing/etcdtest for the tests,
// so that tests run against the etcd the agent runs.
//
// It must not know gtrain's keys or roles, and must not import coord.
package embedetcd

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// CompactionRetention is how much history the member keeps: etcd compacts
// away the revisions older than this, about every tenth of it.
const CompactionRetention = 10 * time.Minute

// readyTimeout bounds the wait for a new member to serve.
const readyTimeout = 60 * time.Second

// Config says where the member keeps its data and listens.
type Config struct {
	Dir        string // data dir; its parent is created
	ClientAddr string // host:port for clients
	PeerAddr   string // host:port for peers
	Name       string // member name; "" is etcd's default
}

// Member is a running member.
type Member struct {
	*embed.Etcd
	Endpoint string // client URL to dial
	// LogFile, Dir + ".log", receives etcd's own log at warn level and
	// above. The member's shutdown chatter is logged at error level and
	// would drown its host's log, so it is kept apart.
	LogFile string
}

// Start starts the member and waits until it serves, fails or readyTimeout
// passes.
func Start(c Config) (*Member, error) {
	cfg, err := config(c)
	if err != nil {
		return nil, err
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: start in %s on %s: %w", c.Dir, c.ClientAddr, err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(readyTimeout):
		e.Close()
		return nil, fmt.Errorf("embedded etcd: not ready after %s in %s", readyTimeout, c.Dir)
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd: %w", err)
	}
	return &Member{Etcd: e, Endpoint: cfg.ListenClientUrls[0].String(), LogFile: logFile(cfg)}, nil
}

// config turns c into etcd's configuration.
func config(c Config) (*embed.Config, error) {
	cfg := embed.NewConfig()
	cfg.Dir = filepath.Clean(c.Dir)
	if c.Name != "" {
		cfg.Name = c.Name
	}
	cu, err := url.Parse("http://" + c.ClientAddr)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: client address %q: %w", c.ClientAddr, err)
	}
	pu, err := url.Parse("http://" + c.PeerAddr)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: peer address %q: %w", c.PeerAddr, err)
	}
	cfg.ListenClientUrls = []url.URL{*cu}
	cfg.AdvertiseClientUrls = []url.URL{*cu}
	cfg.ListenPeerUrls = []url.URL{*pu}
	cfg.AdvertisePeerUrls = []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	if err := os.MkdirAll(filepath.Dir(cfg.Dir), 0o755); err != nil {
		return nil, fmt.Errorf("embedded etcd: %w", err)
	}
	zl, err := zap.Config{
		Level:            zap.NewAtomicLevelAt(zap.WarnLevel),
		Encoding:         "json",
		EncoderConfig:    zap.NewProductionEncoderConfig(),
		OutputPaths:      []string{logFile(cfg)},
		ErrorOutputPaths: []string{logFile(cfg)},
	}.Build()
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: log file %s: %w", logFile(cfg), err)
	}
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zl)
	// A training cluster's etcd holds small records; keep the WAL snappy.
	cfg.SnapshotCount = 10000
	// Keep CompactionRetention of history and drop the rest, so a long job
	// does not grow the database without bound; a watcher cut off for less
	// than that resumes where it was.
	cfg.AutoCompactionMode = "periodic"
	cfg.AutoCompactionRetention = CompactionRetention.String()
	return cfg, nil
}

func logFile(cfg *embed.Config) string { return cfg.Dir + ".log" }
