package coord

import (
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// EmbeddedConfig configures the single-member etcd of `gtraind agent --dev`.
type EmbeddedConfig struct {
	Dir        string // data dir of the member
	ClientAddr string // host:port for clients, e.g. 127.0.0.1:2379
	PeerAddr   string // host:port for peers, e.g. 127.0.0.1:2380
	Name       string
}

// Validate names the bad field.
func (c EmbeddedConfig) Validate() error {
	switch {
	case c.Dir == "":
		return fmt.Errorf("embedded etcd: Dir must be set")
	case c.ClientAddr == "":
		return fmt.Errorf("embedded etcd: ClientAddr must be set")
	case c.PeerAddr == "":
		return fmt.Errorf("embedded etcd: PeerAddr must be set")
	}
	return nil
}

// Embedded is a running single-member etcd.
type Embedded struct {
	etcd *embed.Etcd
	// Endpoint is the client URL to dial.
	Endpoint string
}

// StartEmbedded starts a single-member etcd and waits until it serves.
func StartEmbedded(c EmbeddedConfig, log *slog.Logger) (*Embedded, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
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
	// etcd logs to a file beside its data dir: its shutdown chatter is logged
	// at error level and would drown the agent's own log.
	if err := os.MkdirAll(filepath.Dir(cfg.Dir), 0o755); err != nil {
		return nil, fmt.Errorf("embedded etcd: %w", err)
	}
	zl, err := zap.Config{
		Level:            zap.NewAtomicLevelAt(zap.WarnLevel),
		Encoding:         "json",
		EncoderConfig:    zap.NewProductionEncoderConfig(),
		OutputPaths:      []string{cfg.Dir + ".log"},
		ErrorOutputPaths: []string{cfg.Dir + ".log"},
	}.Build()
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: log file %s.log: %w", cfg.Dir, err)
	}
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zl)
	// A training cluster's etcd holds small records; keep the WAL snappy.
	cfg.SnapshotCount = 10000
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: start in %s on %s: %w", c.Dir, c.ClientAddr, err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, fmt.Errorf("embedded etcd: not ready after 60s in %s", c.Dir)
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd: %w", err)
	}
	if log != nil {
		log.Info("embedded etcd ready", "dir", c.Dir, "client", c.ClientAddr)
	}
	return &Embedded{etcd: e, Endpoint: cu.String()}, nil
}

// Close stops the member.
func (e *Embedded) Close() { e.etcd.Close() }

// Err reports a fatal etcd server error.
func (e *Embedded) Err() <-chan error { return e.etcd.Err() }
