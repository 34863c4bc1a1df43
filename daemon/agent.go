package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
)

// Run is `gtraind agent`: it registers this node, serves the Control API,
// supervises the roles placed here, and calls ready with the API's bound
// address once all of that works. It returns nil when ctx ends, after
// stopping every child (SIGTERM, SIGKILL after StopGrace), deregistering,
// and closing gossip, the API and etcd; it returns an error when it cannot
// start or when the embedded etcd fails.
func Run(ctx context.Context, cfg Config, ready func(apiAddr string)) (err error) {
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg, err = cfg.withDefaults()
	if err != nil {
		return err
	}
	log := cfg.Log
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return fmt.Errorf("data dir (--data-dir) %s: %w", cfg.DataDir, err)
	}

	// Everything started is stopped in reverse order, whatever happens.
	var closers []func()
	defer func() {
		for _, c := range slices.Backward(closers) {
			c()
		}
	}()

	endpoints := cfg.EtcdEndpoints
	var etcdFailed <-chan error
	if cfg.Dev {
		emb, err := coord.StartEmbedded(coord.EmbeddedConfig{
			Dir:        filepath.Join(cfg.DataDir, "etcd"),
			ClientAddr: cfg.EtcdClientAddr,
			PeerAddr:   cfg.EtcdPeerAddr,
			Name:       cfg.NodeName,
		}, log)
		if err != nil {
			return err
		}
		closers = append(closers, emb.Close)
		endpoints = []string{emb.Endpoint}
		etcdFailed = emb.Err()
	}
	cli, err := coord.Dial(ctx, endpoints, log)
	if err != nil {
		return err
	}
	closers = append(closers, func() { _ = cli.Close() })

	now := time.Now
	peers := newMembers(log)
	sup := newSupervisor(cli, cfg, endpoints, now)

	// Listen before registering, so the record carries the real address
	// (port 0 picks one).
	lis, err := net.Listen("tcp", cfg.APIAddr)
	if err != nil {
		return fmt.Errorf("control API (--api-addr) %s: %w", cfg.APIAddr, err)
	}
	srv := grpc.NewServer()
	api.RegisterControlServer(srv, newControlServer(cli, cfg, sup, peers, now))
	closers = append(closers, func() { srv.Stop(); _ = lis.Close() })

	rec := coord.NodeRecord{
		PID:        os.Getpid(),
		Name:       cfg.NodeName,
		APIAddr:    lis.Addr().String(),
		GossipAddr: cfg.GossipAddr,
		CPU:        runtime.NumCPU(),
		Memory:     totalMemory(),
		DataDir:    cfg.DataDir,
		State:      api.NodeReady,
		Started:    now().UTC(),
	}
	reg, err := register(ctx, cli, rec, cfg.SessionTTL, log)
	if err != nil {
		return err
	}
	gossip, err := coord.StartGossip(coord.GossipConfig{
		Name:     cfg.NodeName,
		Addr:     cfg.GossipAddr,
		Join:     gossipPeers(ctx, cli, cfg),
		Log:      log,
		OnChange: peers.change,
	})
	if err != nil {
		reg.close()
		return fmt.Errorf("gossip (--gossip-addr): %w", err)
	}
	closers = append(closers, gossip.Stop, reg.close) // deregister, then leave the ring
	if rec.GossipAddr != gossip.Addr() {
		rec.GossipAddr = gossip.Addr()
		if err := reg.update(ctx, rec); err != nil {
			return fmt.Errorf("register node %s: %w", cfg.NodeName, err)
		}
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()

	supCtx, stopWatching := context.WithCancel(context.Background())
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		sup.run(supCtx)
	}()
	// Children go first: they need etcd, and their records say how they ended.
	closers = append(closers, func() {
		stopWatching()
		<-watching
		sup.stop()
	})

	log.Info("agent ready", "node", cfg.NodeName, "api", rec.APIAddr, "gossip", rec.GossipAddr, "etcd", endpoints)
	if ready != nil {
		ready(rec.APIAddr)
	}

	select {
	case <-ctx.Done():
		log.Info("agent stopping", "node", cfg.NodeName)
		return nil
	case err := <-etcdFailed:
		return fmt.Errorf("%w: %v", ErrEtcdFailed, err)
	case err := <-served:
		if err == nil || errors.Is(err, grpc.ErrServerStopped) {
			err = errors.New("stopped serving")
		}
		return fmt.Errorf("%w: %v", ErrAPIServer, err)
	case err := <-reg.lost:
		return err
	}
}

// gossipPeers is --join plus the gossip addresses of the nodes already
// registered, so that agents sharing an etcd find each other without --join.
func gossipPeers(ctx context.Context, cli *clientv3.Client, cfg Config) []string {
	peers := slices.Clone(cfg.Join)
	lctx, cancel := context.WithTimeout(ctx, etcdTimeout)
	defer cancel()
	nodes, err := coord.ListJSON[coord.NodeRecord](lctx, cli, coord.NodePrefix())
	if err != nil {
		cfg.Log.Warn("cannot list nodes to join their gossip ring", "err", err)
		return peers
	}
	for _, n := range nodes {
		if n.Name != cfg.NodeName && n.GossipAddr != "" && !slices.Contains(peers, n.GossipAddr) {
			peers = append(peers, n.GossipAddr)
		}
	}
	return peers
}
