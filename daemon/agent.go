package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/daemon/controlapi"
	"github.com/gtrain/gtrain/daemon/scheduler"
	"github.com/gtrain/gtrain/daemon/supervisor"
	"github.com/gtrain/gtrain/internal/clock"
	"github.com/gtrain/gtrain/internal/sandbox"
)

// Run is `gtraind agent`: it registers this node, serves the Control API,
// supervises the roles placed here, and calls ready with the API's bound
// address once all of that works. It returns nil when ctx ends, after
// stopping every child (SIGTERM, SIGKILL after StopGrace), deregistering,
// and closing gossip, the API and etcd; it returns an error when it cannot
// start or when the embedded etcd fails.
func Run(ctx context.Context, cfg Config, ready func(apiAddr string)) error {
	cfg, err := prepare(cfg)
	if err != nil {
		return err
	}
	unlock, err := lockDataDir(cfg)
	if err != nil {
		return err
	}
	a := &agent{cfg: cfg, log: cfg.Log, clock: clock.System{}, notify: newNotifier(cfg.Log), closers: []func(){unlock}}
	defer a.close()
	if err := checkFreeSpace(cfg); err != nil {
		return err
	}
	if err := writeEtcdPassword(cfg); err != nil {
		return err
	}
	cfg.warnInsecure()
	cfg.logProgramPolicy()
	if err := sandbox.SweepOneOff(cfg.DataDir); err != nil {
		cfg.Log.Warn("cannot release the program uids of declares that died with an earlier agent", "err", err)
	}
	if err := a.connectEtcd(ctx); err != nil {
		return err
	}
	if err := a.listen(); err != nil {
		return err
	}
	if err := a.ctl.LoadRevocations(ctx); err != nil {
		return err
	}
	if err := a.join(ctx); err != nil {
		return err
	}
	if err := a.serveMetrics(); err != nil {
		return err
	}
	a.serve()
	if err := a.serveConsole(); err != nil {
		return err
	}
	a.log.Info("agent ready", "node", cfg.NodeName, "api", a.rec.APIAddr, "gossip", a.rec.GossipAddr,
		"advertise", cfg.AdvertiseAddr, "etcd", a.endpoints)
	a.notify.ready()
	if ready != nil {
		ready(a.rec.APIAddr)
	}
	defer a.notify.stopping() // before close stops the children
	return a.wait(ctx)
}

// agent is one run of Run: what it started, to be stopped in reverse order.
type agent struct {
	cfg    Config
	log    *slog.Logger
	clock  clock.Clock
	notify *notifier

	closers    []func() // run backwards by close, whatever happens
	endpoints  []string
	etcdFailed <-chan error // nil without Dev
	cli        *clientv3.Client
	peers      *members
	sup        *supervisor.Supervisor
	ctl        *controlapi.Server
	lis        net.Listener
	srv        *grpc.Server
	rec        schema.NodeRecord
	reg        *registration
	served     chan error
}

// prepare validates cfg, fills its defaults and creates its data dir.
func prepare(cfg Config) (Config, error) {
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return cfg, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return cfg, fmt.Errorf("data dir (--data-dir) %s: %w", cfg.DataDir, err)
	}
	if cfg.AdvertiseAddr, err = resolveAdvertise(cfg, interfaceIPs); err != nil {
		return cfg, err
	}
	if err := checkNodeCert(cfg); err != nil {
		return cfg, err
	}
	var etcd []string // --dev's etcd is on loopback
	if !cfg.Dev {
		etcd = cfg.EtcdEndpoints
	}
	if err := checkLoopback(cfg.AdvertiseAddr, cfg.GossipAddr, etcd); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func (a *agent) close() {
	for _, c := range slices.Backward(a.closers) {
		c()
	}
}

// connectEtcd starts the embedded etcd of Dev, if asked, and dials etcd.
func (a *agent) connectEtcd(ctx context.Context) error {
	a.endpoints = a.cfg.EtcdEndpoints
	if a.cfg.Dev {
		emb, err := coord.StartEmbedded(coord.EmbeddedConfig{
			Dir:        filepath.Join(a.cfg.DataDir, "etcd"),
			ClientAddr: a.cfg.EtcdClientAddr,
			PeerAddr:   a.cfg.EtcdPeerAddr,
			Name:       a.cfg.NodeName,
		}, a.log)
		if err != nil {
			return err
		}
		a.closers = append(a.closers, emb.Close)
		a.endpoints = []string{emb.Endpoint}
		a.etcdFailed = emb.Err()
	}
	etcd := a.cfg.etcdConfig()
	etcd.Endpoints = a.endpoints
	cli, err := coord.DialConfig(ctx, etcd, a.log)
	if err != nil {
		return err
	}
	a.cli = cli
	a.closers = append(a.closers, func() { _ = cli.Close() })
	return nil
}

// listen binds the Control API before the node registers, so that its
// record carries the real address (port 0 picks one).
func (a *agent) listen() error {
	a.peers = newMembers(a.log, a.cfg.SessionTTL)
	a.sup = supervisor.New(a.cli, a.cfg.supervisorConfig(a.endpoints), a.clock)
	relayCreds, err := peerCreds(a.cfg)
	if err != nil {
		return fmt.Errorf("log relay TLS: %w", err)
	}
	ctl, err := controlapi.New(a.cli, a.cfg.controlConfig(relayCreds), a.sup, a.peers, a.clock)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	lis, err := listenAPI(a.cfg.APIAddr)
	if err != nil {
		return fmt.Errorf("control API (--api-addr) %s: %w", a.cfg.APIAddr, err)
	}
	creds, err := a.cfg.TLS.ServerCreds()
	if err != nil {
		_ = lis.Close()
		return fmt.Errorf("control API TLS: %w", err)
	}
	a.lis, a.srv = lis, grpc.NewServer(append(ctl.ServerOptions(), grpc.Creds(creds))...)
	api.RegisterControlServer(a.srv, ctl)
	a.ctl = ctl
	a.closers = append(a.closers, func() { a.srv.Stop(); _ = lis.Close() })
	return nil
}

// join registers the node and joins the gossip ring, then records the
// gossip address the ring bound.
func (a *agent) join(ctx context.Context) error {
	a.rec = schema.NodeRecord{
		PID:        os.Getpid(),
		Host:       coord.HostID(),
		Name:       a.cfg.NodeName,
		APIAddr:    published(a.lis.Addr(), a.cfg.AdvertiseAddr),
		GossipAddr: a.cfg.GossipAddr,
		Capacity:   a.cfg.capacity(),
		DataDir:    a.cfg.DataDir,
		State:      api.NodeReady,
		Started:    a.clock.Now().UTC(),
	}
	a.rec.CertNotAfter = a.certNotAfter()
	reg, err := register(ctx, a.cli, a.rec, a.cfg.SessionTTL, a.log)
	if err != nil {
		return err
	}
	gossip, err := coord.StartGossip(coord.GossipConfig{
		Name:      a.cfg.NodeName,
		Addr:      a.cfg.GossipAddr,
		Advertise: gossipAdvertise(a.cfg),
		Join:      gossipPeers(ctx, a.cli, a.cfg),
		Log:       a.log,
		OnChange:  a.peers.change,
		SecretKey: a.cfg.GossipKey,
	})
	if err != nil {
		reg.close()
		return fmt.Errorf("gossip (--gossip-addr): %w", err)
	}
	a.reg = reg
	a.closers = append(a.closers, gossip.Stop, reg.close) // deregister, then leave the ring
	if a.rec.GossipAddr != gossip.Addr() {
		a.rec.GossipAddr = gossip.Addr()
		if err := reg.update(ctx, a.rec); err != nil {
			return fmt.Errorf("register node %s: %w", a.cfg.NodeName, err)
		}
	}
	return nil
}

// serve starts the Control API, the supervisor and the scheduler. The
// scheduler is the first to stop (it resigns, so another agent takes over
// at once), then the children: they need etcd, and their records say how
// they ended.
func (a *agent) serve() {
	a.served = make(chan error, 1)
	go func() { a.served <- a.srv.Serve(a.lis) }()
	supCtx, stopWatching := context.WithCancel(context.Background())
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		a.sup.Run(supCtx)
	}()
	revoking := make(chan struct{})
	go func() {
		defer close(revoking)
		a.ctl.WatchRevocations(supCtx)
	}()
	schedCtx, stopScheduling := context.WithCancel(context.Background())
	scheduling := make(chan struct{})
	go func() {
		defer close(scheduling)
		scheduler.New(a.cli, a.cfg.schedulerConfig(), a.peers, a.clock).Run(schedCtx)
	}()
	a.closers = append(a.closers, func() {
		stopScheduling()
		<-scheduling
		stopWatching()
		<-watching
		<-revoking
		a.sup.Stop()
	})
}

// wait runs until ctx ends (nil) or something the agent needs fails,
// feeding systemd's watchdog meanwhile: a wedged loop stops feeding it.
func (a *agent) wait(ctx context.Context) error {
	tick, stop := a.notify.ticks()
	defer stop()
	healthy := healthCheck(a.notify.every/2, a.sup.Responsive)
	certCheck := time.NewTicker(certCheckEvery)
	defer certCheck.Stop()
	for {
		select {
		case <-tick:
			a.notify.feed(healthy)
		case <-certCheck.C:
			a.publishCertExpiry(ctx)
		case <-ctx.Done():
			a.log.Info("agent stopping", "node", a.cfg.NodeName)
			return nil
		case err := <-a.etcdFailed:
			return fmt.Errorf("%w: %v", ErrEtcdFailed, err)
		case err := <-a.served:
			if err == nil || errors.Is(err, grpc.ErrServerStopped) {
				err = errors.New("stopped serving")
			}
			return fmt.Errorf("%w: %v", ErrAPIServer, err)
		case err := <-a.reg.lost:
			return err
		}
	}
}

// certCheckEvery is how often the agent looks for a replaced node
// certificate to publish its expiry (the TLS layer itself re-reads the
// files at each handshake).
const certCheckEvery = time.Minute

// certNotAfter is when the node certificate in --tls-cert expires; nil
// without TLS, the last known one when the file does not load now.
func (a *agent) certNotAfter() *time.Time {
	if !a.cfg.TLS.Enabled() {
		return nil
	}
	leaf, err := a.cfg.TLS.Leaf()
	if err != nil {
		a.log.Warn("cannot read the node certificate; its expiry in the node record is left as it was", "cert", a.cfg.TLS.Cert, "err", err)
		return a.rec.CertNotAfter
	}
	t := leaf.NotAfter.UTC()
	return &t
}

// publishCertExpiry updates the node record when a replaced certificate
// expires at another time, so that `gctl node list` warns about the right one.
func (a *agent) publishCertExpiry(ctx context.Context) {
	na := a.certNotAfter()
	if na == nil || a.rec.CertNotAfter != nil && na.Equal(*a.rec.CertNotAfter) {
		return
	}
	a.rec.CertNotAfter = na
	if err := a.reg.update(ctx, a.rec); err != nil {
		a.log.Warn("cannot publish the node certificate's new expiry", "err", err)
		return
	}
	a.log.Info("node certificate replaced", "cert", a.cfg.TLS.Cert, "not_after", na)
}

// gossipAdvertise is the host the gossip ring publishes for this node: the
// advertise address when --gossip-addr binds a wildcard (memberlist wants
// an IP), else its own host.
func gossipAdvertise(cfg Config) string {
	host, _, err := net.SplitHostPort(cfg.GossipAddr)
	if err != nil || !IsWildcardHost(host) {
		return ""
	}
	if ip := net.ParseIP(cfg.AdvertiseAddr); ip != nil {
		return ip.String()
	}
	ips, err := net.LookupIP(cfg.AdvertiseAddr)
	if err != nil || len(ips) == 0 {
		cfg.Log.Warn("cannot resolve the advertise address for gossip; memberlist picks one", "advertise", cfg.AdvertiseAddr, "err", err)
		return ""
	}
	if ip := firstNonLoopback(ips); ip != nil {
		return ip.String()
	}
	return ips[0].String()
}

// gossipPeers is --join plus the gossip addresses of the nodes already
// registered, so that agents sharing an etcd find each other without --join.
func gossipPeers(ctx context.Context, cli *clientv3.Client, cfg Config) []string {
	peers := slices.Clone(cfg.Join)
	lctx, cancel := context.WithTimeout(ctx, etcdTimeout)
	defer cancel()
	nodes, err := coord.ListJSON[schema.NodeRecord](lctx, cli, coord.NodePrefix())
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
