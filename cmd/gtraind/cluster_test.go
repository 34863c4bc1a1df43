package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/daemon"
)

// agentSettings runs `gtraind agent ARGS` up to the point it would start
// the agent, and returns the settings it read.
func agentSettings(t *testing.T, args ...string) (daemon.Config, error) {
	t.Helper()
	var got daemon.Config
	cmd := newAgentCmdRunning(func(_ context.Context, cfg daemon.Config) error { got = cfg; return nil })
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	return got, err
}

// The cluster settings come from flags, then GTRAIN_* env, then the config
// file (docs/reference.md#gtraind).
func TestAgentClusterSettings(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(conf, []byte(`etcd-endpoints: 10.0.0.1:2379,10.0.0.2:2379
etcd-cacert: /etc/gtrain/ca.pem
etcd-cert: /etc/gtrain/node.pem
etcd-key: /etc/gtrain/node-key.pem
etcd-user: file-user
etcd-password: file-password
advertise-addr: 10.0.0.7
insecure: true
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := agentSettings(t, "--config", conf)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.EtcdCACert != "/etc/gtrain/ca.pem" || cfg.EtcdCert != "/etc/gtrain/node.pem" || cfg.EtcdKey != "/etc/gtrain/node-key.pem" ||
		cfg.EtcdUser != "file-user" || cfg.EtcdPassword != "file-password" || cfg.AdvertiseAddr != "10.0.0.7" ||
		strings.Join(cfg.EtcdEndpoints, ",") != "10.0.0.1:2379,10.0.0.2:2379" {
		t.Errorf("from the config file: %+v", cfg)
	}
	t.Setenv("GTRAIN_ETCD_PASSWORD", "env-password")
	t.Setenv("GTRAIN_ADVERTISE_ADDR", "10.0.0.8")
	cfg, err = agentSettings(t, "--config", conf, "--advertise-addr", "10.0.0.9", "--etcd-user", "flag-user")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.EtcdPassword != "env-password" || cfg.AdvertiseAddr != "10.0.0.9" || cfg.EtcdUser != "flag-user" {
		t.Errorf("env over file, flag over env: password %q advertise %q user %q", cfg.EtcdPassword, cfg.AdvertiseAddr, cfg.EtcdUser)
	}
}

// deploy/agent.yaml, the example config of a machine in a cluster, is one
// the agent accepts.
func TestDeployAgentYAML(t *testing.T) {
	cfg, err := agentSettings(t, "--config", filepath.Join("..", "..", "deploy", "agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.AdvertiseAddr == "" || cfg.EtcdCACert == "" || cfg.EtcdUser == "" || len(cfg.EtcdEndpoints) != 3 || cfg.Dev {
		t.Errorf("deploy/agent.yaml reads as %+v: want an advertise address, etcd TLS and user, 3 endpoints", cfg)
	}
	if cfg.TLS.Validate() != nil || !cfg.TLS.Enabled() || cfg.Insecure || len(cfg.GossipKey) != 0 {
		t.Errorf("deploy/agent.yaml: TLS %+v insecure %v gossip key %d bytes: want the API on mutual TLS, not --insecure",
			cfg.TLS, cfg.Insecure, len(cfg.GossipKey))
	}
}

// Bad cluster settings are usage errors (exit 2) naming the flag.
func TestAgentClusterSettingsRejected(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--etcd-endpoints", "e:2379", "--advertise-addr", "10.0.0.1:7164"}, "--advertise-addr"},
		{[]string{"--etcd-endpoints", "e:2379", "--etcd-cert", "/c.pem"}, "--etcd-key"},
		{[]string{"--dev", "--etcd-user", "u"}, "--dev"},
	} {
		_, err := agentSettings(t, tc.args...)
		if exitCode(err) != 2 || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("gtraind agent %v: %v (exit %d), want exit 2 naming %s", tc.args, err, exitCode(err), tc.want)
		}
	}
}

func TestCheckListen(t *testing.T) {
	for _, tc := range []struct {
		role, listen string
		ok           bool
	}{
		{"pserver", "10.0.0.1:0", true},
		{"master", "127.0.0.1:0", true},
		{"pserver", "0.0.0.0:0", false},
		{"master", ":0", false},
		{"pserver", "[::]:0", false},
		{"trainer", "0.0.0.0:0", true}, // trainers serve nothing
	} {
		if err := checkListen(tc.role, tc.listen); (err == nil) != tc.ok || (err != nil && exitCode(err) != 2) {
			t.Errorf("checkListen(%s, %s) = %v, want ok=%v (exit 2 otherwise)", tc.role, tc.listen, err, tc.ok)
		}
	}
}
