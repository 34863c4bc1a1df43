package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gtrain/gtrain/daemon"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

func newAgentCmd() *cobra.Command {
	return newAgentCmdRunning(func(ctx context.Context, cfg daemon.Config) error {
		return daemon.Run(ctx, cfg, nil) // daemon.Run logs "agent ready"
	})
}

// newAgentCmdRunning is `gtraind agent` calling run with the settings read
// (tests read them without starting an agent).
func newAgentCmdRunning(run func(context.Context, daemon.Config) error) *cobra.Command {
	def := daemon.DefaultConfig()
	v := viper.New()
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run the node daemon",
		Long: `Run the gtrain node daemon.

With --dev it starts a single-member etcd under <data-dir>/etcd on loopback: a whole
cluster on one machine, nothing else to install. Without --dev, --etcd-endpoints names
an existing etcd cluster.

On several machines: --etcd-endpoints names the etcd cluster (with --etcd-cacert,
--etcd-cert, --etcd-key for TLS and --etcd-user/--etcd-password for its auth; keep the
password in GTRAIN_ETCD_PASSWORD or the config file, not on the command line), and
--advertise-addr the address of this machine the other nodes reach (default the host
of --api-addr, or the first non-loopback address when that is 0.0.0.0). Under systemd
(deploy/systemd, Type=notify) it reports READY=1 once it serves and feeds WatchdogSec=.

Off loopback the API is served only with mutual TLS: --tls-ca, --tls-cert and --tls-key
name the cluster CA and this node's certificate (gtraind cert), which the log relay and
the roles' RPCs use too; --gossip-key encrypts gossip. --insecure serves such an API in
the clear instead, unauthenticated (logged as a warning at start). Without TLS nothing
tells callers apart, so the agent starts only with --dev (a test cluster), --insecure,
or an --api-addr unix:///PATH socket of mode 0600 (its callers are the agent's user or
root: the local admin), and otherwise takes every caller for an anonymous admin; with TLS a caller without a
certificate or token is refused. Bearer tokens living longer than --token-max-lifetime
are refused; a node certificate whose files are replaced is used from the next connection.

Settings come from flags, then GTRAIN_* environment variables (GTRAIN_DATA_DIR,
GTRAIN_NODE_NAME, GTRAIN_ETCD_ENDPOINTS, ...), then the --config YAML file (keys as the
flag names: data-dir, node-name, ...), then the defaults.

One agent per --data-dir: it locks the dir at start (a second agent there exits 2
naming the holder) and checks its free space (16 MiB, plus 64 MiB for the write-ahead
log of --dev's etcd; with less it exits 1 saying so).

Ready when 'gctl node list' shows the node ready. SIGINT/SIGTERM stops the role
processes, deregisters the node and exits 0.`,
		Example: `  gtraind agent --dev --data-dir /tmp/gtrain
  gtraind agent --etcd-endpoints 10.0.0.1:2379,10.0.0.2:2379,10.0.0.3:2379 --api-addr 10.0.0.11:7164 --gossip-addr 10.0.0.11:7946
  gtraind agent --config /etc/gtrain/agent.yaml
  gtraind agent --etcd-endpoints 10.0.0.1:2379 --api-addr 10.0.0.11:7164 --tls-ca pki/ca.crt --tls-cert pki/n1.crt --tls-key pki/n1.key --gossip-key @pki/gossip.key
  gtraind agent --config /etc/gtrain/agent.yaml --cpu 14 --memory 60Gi --labels zone=a,disk=ssd`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := refuseInlineGossipKey(cmd.Flags()); err != nil {
				return err
			}
			if f := v.GetString("config"); f != "" {
				v.SetConfigFile(f)
				if err := v.ReadInConfig(); err != nil {
					return fmt.Errorf("%w: --config %s: %v", errUsage, f, err)
				}
			}
			cfg, err := agentConfig(v)
			if err != nil {
				return err
			}
			return run(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	f.Bool("dev", false, "start an embedded single-member etcd under <data-dir>/etcd (single-node cluster)")
	f.Bool("allow-unisolated-programs", false, "on a node that cannot isolate model programs (not root, no cgroup memory and pids controllers), "+
		"run program jobs with the agent's uid, environment and files instead of refusing them")
	f.Bool("exclusive-cpus", false, "give a trainer of a built-in model that asks for whole CPUs (resources.trainer.cpu: 1, 2, ...) as many CPUs of this node for its computation alone, "+
		"while one CPU or more stays shared by the agent and every other role thread; a job whose trainers on the node do not all fit computes on the shared CPUs")
	f.String("data-dir", def.DataDir, "where etcd (with --dev), job logs, models and checkpoints live")
	f.String("node-name", def.NodeName, "this node's name in the cluster")
	f.String("api-addr", def.APIAddr, "address of the API gctl talks to: HOST:PORT, or unix:///PATH for a Unix socket only the agent's user may open (mode 0600; its callers are the local admin)")
	f.String("gossip-addr", def.GossipAddr, "address of the gossip (memberlist) endpoint")
	f.String("join", "", "gossip peers to join, HOST:PORT,...")
	f.String("etcd-client-addr", def.EtcdClientAddr, "with --dev: the embedded etcd's client address")
	f.String("etcd-peer-addr", def.EtcdPeerAddr, "with --dev: the embedded etcd's peer address")
	f.Int("session-ttl", def.SessionTTL, "seconds before a dead process's etcd lease expires")
	f.String("config", "", "YAML file with agent settings (flags and GTRAIN_* env override it)")
	f.String("metrics-addr", "", "serve Prometheus /metrics (plain HTTP) on this HOST:PORT, e.g. 127.0.0.1:9164; \"\": none")
	f.String("ui-addr", "", "serve the web console on this HOST:PORT, e.g. 127.0.0.1:8164 (HTTPS with --tls-*; visitors log in with a bearer token); \"\": none")
	addClusterFlags(f)
	addCapacityFlags(f)
	_ = v.BindPFlags(f)
	v.SetEnvPrefix("GTRAIN")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	return cmd
}

// agentConfig reads the agent's settings from v (flags, env, file).
func agentConfig(v *viper.Viper) (daemon.Config, error) {
	cfg := daemon.DefaultConfig()
	cfg.Dev = v.GetBool("dev")
	cfg.AllowUnisolatedPrograms = v.GetBool("allow-unisolated-programs")
	cfg.ExclusiveCPUs = v.GetBool("exclusive-cpus")
	cfg.DataDir = v.GetString("data-dir")
	cfg.NodeName = v.GetString("node-name")
	cfg.APIAddr = v.GetString("api-addr")
	cfg.GossipAddr = v.GetString("gossip-addr")
	cfg.Join = splitList(v.GetString("join"))
	cfg.EtcdEndpoints = splitList(v.GetString("etcd-endpoints"))
	cfg.EtcdClientAddr = v.GetString("etcd-client-addr")
	cfg.EtcdPeerAddr = v.GetString("etcd-peer-addr")
	cfg.SessionTTL = v.GetInt("session-ttl")
	cfg.MetricsAddr = v.GetString("metrics-addr")
	cfg.UIAddr = v.GetString("ui-addr")
	cfg.ConfigFile = absOrEmpty(v.GetString("config"))
	if err := readClusterSettings(v, &cfg); err != nil {
		return cfg, err
	}
	if err := capacityConfig(v, &cfg); err != nil {
		return cfg, err
	}
	cfg.Log = newLogger(os.Stderr, "agent")
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("%w: %v", errUsage, err)
	}
	return cfg, nil
}

// refuseInlineGossipKey refuses the gossip key itself on the command line,
// which every local user reads (ps, /proc); a file, the environment and
// the config file are not.
func refuseInlineGossipKey(f *pflag.FlagSet) error {
	if fl := f.Lookup("gossip-key"); fl != nil && fl.Changed && !strings.HasPrefix(fl.Value.String(), "@") {
		return fmt.Errorf("%w: --gossip-key with the key itself puts it on the command line, which every local user can read: "+
			"pass --gossip-key @FILE (gtraind cert init writes gossip.key), or set GTRAIN_GOSSIP_KEY or gossip-key in --config", errUsage)
	}
	return nil
}

// absOrEmpty is p made absolute ("" stays ""): a path the sandbox covers
// in another working directory.
func absOrEmpty(p string) string {
	if a, err := filepath.Abs(p); p != "" && err == nil {
		return a
	}
	return p
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
