package netcluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/testing/etcdproc"
)

// subnet is the cluster's network, private to its namespaces: concurrent
// clusters each have their own bridge, so they may all use it.
const subnet = "10.77.0."

// clientIP is the address of the client namespace (the operator's desk).
const clientIP = subnet + "100"

// Cluster is a running cluster of hosts.
type Cluster struct {
	// ID prefixes every namespace: unique per cluster.
	ID    string
	Dir   string // data of every host, logs; the shared storage
	Bin   string // directory with gtraind and gctl
	Hosts []*Host
	// Etcd are the members, one per host.
	Etcd []*etcdproc.Member
	// PKI is the etcd's TLS (nil with EtcdPlain).
	PKI  *etcdproc.PKI
	auth EtcdAuth
	// GctlConfig, when set, is the gctl config file (a context with TLS
	// files) Gctl and StartAgent's readiness check use.
	GctlConfig string

	switchNS, clientNS string
}

// Host is one namespace of the cluster.
type Host struct {
	Name  string // the node name of its agent: h1, h2, ...
	NS    string
	IP    string
	Agent *Agent // nil until StartAgent
	// OwnPIDNamespace runs its agent in a PID namespace of its own, as on
	// another machine or in a container: its PIDs are not the test's.
	OwnPIDNamespace bool
}

// Options say what cluster to make.
type Options struct {
	Hosts int
	Dir   string // data of every host, logs; the shared storage
	Bin   string // directory with gtraind and gctl
	// Etcd is how the agents get into etcd.
	Etcd EtcdAuth
}

// EtcdAuth is how a cluster's etcd lets clients in.
type EtcdAuth int

const (
	// EtcdPlain: no TLS, no auth.
	EtcdPlain EtcdAuth = iota
	// EtcdPassword: TLS with client certificates, auth on; the agents get
	// the TLS files and a user, and its password in their environment.
	EtcdPassword
	// EtcdCertUser: TLS with client certificates, auth on; the agents are
	// the user their certificate names (its CN), no password.
	EtcdCertUser
)

// The etcd accounts of a cluster with auth on: root with a password, and
// the user named by the client certificate's CN.
const (
	etcdUser     = "root"
	etcdPassword = "gtrain-netcluster-secret"
	etcdCertUser = "gtrain"
)

// New makes the host namespaces on a bridge, a client namespace beside
// them, and starts one etcd member in each host. Close undoes all of it.
func New(o Options) (*Cluster, error) {
	c := &Cluster{ID: "gt" + randomID(), Dir: o.Dir, Bin: o.Bin}
	c.switchNS, c.clientNS = c.ID+"-sw", c.ID+"-cl"
	if err := c.makeNetwork(o.Hosts); err != nil {
		c.Close()
		return nil, err
	}
	c.auth = o.Etcd
	if err := c.startEtcd(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// makeNetwork creates the bridge, the hosts and the client.
func (c *Cluster) makeNetwork(n int) error {
	if err := ip("netns", "add", c.switchNS); err != nil {
		return err
	}
	if err := run(
		[]string{"-n", c.switchNS, "link", "add", "br0", "type", "bridge"},
		[]string{"-n", c.switchNS, "link", "set", "br0", "up"},
	); err != nil {
		return err
	}
	for i := range n {
		h := &Host{Name: fmt.Sprintf("h%d", i+1), NS: fmt.Sprintf("%s-h%d", c.ID, i+1), IP: fmt.Sprintf("%s%d", subnet, i+1)}
		if err := c.plug(h.NS, h.IP, fmt.Sprintf("v%d", i+1)); err != nil {
			return err
		}
		c.Hosts = append(c.Hosts, h)
	}
	return c.plug(c.clientNS, clientIP, "vcl")
}

// plug makes namespace ns with address addr on a veth into the bridge.
func (c *Cluster) plug(ns, addr, port string) error {
	if err := ip("netns", "add", ns); err != nil {
		return err
	}
	return run(
		[]string{"-n", c.switchNS, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns},
		[]string{"-n", c.switchNS, "link", "set", port, "master", "br0", "up"},
		[]string{"-n", ns, "addr", "add", addr + "/24", "dev", "eth0"},
		[]string{"-n", ns, "link", "set", "eth0", "up"},
		[]string{"-n", ns, "link", "set", "lo", "up"},
	)
}

func run(cmds ...[]string) error {
	for _, args := range cmds {
		if err := ip(args...); err != nil {
			return err
		}
	}
	return nil
}

// startEtcd starts one member per host, as one cluster, with TLS and auth
// unless EtcdPlain.
func (c *Cluster) startEtcd() error {
	secure := c.auth != EtcdPlain
	if secure {
		var ips []string
		for _, h := range c.Hosts {
			ips = append(ips, h.IP)
		}
		pkiDir := filepath.Join(c.Dir, "pki")
		if err := os.MkdirAll(pkiDir, 0o700); err != nil {
			return err
		}
		var err error
		if c.PKI, err = etcdproc.NewPKI(pkiDir, ips...); err != nil {
			return err
		}
	}
	for _, h := range c.Hosts {
		c.Etcd = append(c.Etcd, &etcdproc.Member{
			Name: "etcd-" + h.Name, Host: h.IP, Dir: filepath.Join(c.Dir, h.Name, "etcd"),
			Prefix: inNS(h.NS), Dialer: c.dialer(), TLS: c.PKI,
		})
	}
	if err := etcdproc.StartCluster(c.Etcd); err != nil {
		return err
	}
	if secure {
		return c.enableAuth()
	}
	return nil
}

// enableAuth adds the root user and turns etcd's auth on.
func (c *Cluster) enableAuth() error {
	cli, err := c.etcdClient(context.Background(), false)
	if err != nil {
		return err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.UserAdd(ctx, etcdUser, etcdPassword); err != nil {
		return fmt.Errorf("etcd user: %w", err)
	}
	if _, err := cli.UserGrantRole(ctx, etcdUser, "root"); err != nil {
		return fmt.Errorf("etcd user role: %w", err)
	}
	if _, err := cli.UserAddWithOptions(ctx, etcdCertUser, "", &clientv3.UserAddOptions{NoPassword: true}); err != nil {
		return fmt.Errorf("etcd certificate user: %w", err)
	}
	if _, err := cli.UserGrantRole(ctx, etcdCertUser, "root"); err != nil {
		return fmt.Errorf("etcd certificate user role: %w", err)
	}
	if _, err := cli.AuthEnable(ctx); err != nil {
		return fmt.Errorf("etcd auth enable: %w", err)
	}
	return nil
}

// AgentEtcdFlags are the flags that give an agent the cluster's etcd, and
// the environment it needs beside them (the password of a secure etcd).
func (c *Cluster) AgentEtcdFlags() (flags, env []string) {
	flags = []string{"--etcd-endpoints", c.EtcdEndpoints()}
	if c.PKI == nil {
		return flags, nil
	}
	flags = append(flags, "--etcd-cacert", c.PKI.CACert, "--etcd-cert", c.PKI.ClientCert, "--etcd-key", c.PKI.ClientKey)
	if c.auth == EtcdCertUser {
		return flags, nil
	}
	return append(flags, "--etcd-user", etcdUser), []string{"GTRAIN_ETCD_PASSWORD=" + etcdPassword}
}

// EtcdPassword is the password the agents got ("" unless EtcdPassword),
// to check that it shows on no command line.
func (c *Cluster) EtcdPassword() string {
	if c.auth != EtcdPassword {
		return ""
	}
	return etcdPassword
}

// EtcdEndpoints is the --etcd-endpoints value of the cluster.
func (c *Cluster) EtcdEndpoints() string {
	var eps []string
	for _, m := range c.Etcd {
		eps = append(eps, m.ClientURL())
	}
	return strings.Join(eps, ",")
}

// dialer dials from the client namespace.
func (c *Cluster) dialer() func(context.Context, string) (net.Conn, error) {
	return func(ctx context.Context, addr string) (net.Conn, error) {
		return dialIn(ctx, c.clientNS, "tcp", addr)
	}
}

// GRPCDialer is a grpc.DialOption that reaches the cluster's addresses.
func (c *Cluster) GRPCDialer() grpc.DialOption { return grpc.WithContextDialer(c.dialer()) }

// EtcdClient is a client of the cluster's etcd, from the client namespace.
func (c *Cluster) EtcdClient(ctx context.Context) (*clientv3.Client, error) {
	return c.etcdClient(ctx, c.auth == EtcdPassword)
}

func (c *Cluster) etcdClient(ctx context.Context, auth bool) (*clientv3.Client, error) {
	cfg := clientv3.Config{Endpoints: strings.Split(c.EtcdEndpoints(), ","), DialTimeout: 5 * time.Second,
		DialKeepAliveTime: 5 * time.Second, DialKeepAliveTimeout: 3 * time.Second, Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{c.GRPCDialer()}}
	if c.PKI != nil {
		tlsCfg, err := c.PKI.ClientTLS()
		if err != nil {
			return nil, err
		}
		cfg.TLS = tlsCfg
	}
	if auth {
		cfg.Username, cfg.Password = etcdUser, etcdPassword
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := cli.Get(cctx, coord.Root+"ping"); err != nil {
		cli.Close()
		return nil, fmt.Errorf("etcd of cluster %s: %w", c.ID, err)
	}
	return cli, nil
}

// Close stops every agent and etcd member and removes the namespaces.
func (c *Cluster) Close() {
	for _, h := range c.Hosts {
		if h.Agent != nil {
			h.Agent.Stop(10 * time.Second)
		}
	}
	etcdproc.StopAll(c.Etcd)
	for _, h := range c.Hosts {
		_ = ip("netns", "del", h.NS)
	}
	_ = ip("netns", "del", c.clientNS)
	_ = ip("netns", "del", c.switchNS)
}
