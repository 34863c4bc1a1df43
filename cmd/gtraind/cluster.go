package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/gtrain/gtrain/auth"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/daemon"
	"github.com/gtrain/gtrain/internal/rolecfg"
	"github.com/gtrain/gtrain/pki"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// addClusterFlags are the agent's settings for a cluster of several
// machines (docs/reference.md#gtraind-agent): the address it advertises, its
// access to an external etcd and its TLS files.
func addClusterFlags(f *pflag.FlagSet) {
	f.String("advertise-addr", "", "host (no port) of this machine that the roles bind and publish to other nodes (default: the host of --api-addr, or the first non-loopback address when that is a wildcard)")
	// --etcd-endpoints, --etcd-cacert, ..., --tls-key: the roles take them
	// too. The values bound here go unread: viper reads the flags, then
	// GTRAIN_* and the config file.
	rolecfg.AddAccessFlags(f, new(coord.EtcdConfig), new(pki.Files))
	f.String("gossip-key", "", "@FILE holding the base64 key (16, 24 or 32 bytes) encrypting gossip (gtraind cert init writes gossip.key); the key itself only in GTRAIN_GOSSIP_KEY or the config file, never on the command line")
	f.Duration("token-max-lifetime", auth.DefaultMaxLifetime, "refuse bearer tokens that live longer than this (exp - iat), however they were issued")
	f.Bool("insecure", false, "allow a non-loopback --api-addr or --ui-addr without TLS: anyone who reaches them controls the cluster")
	f.String("etcd-password", "", "password of --etcd-user; prefer GTRAIN_ETCD_PASSWORD or the config file (a command line is visible to every user)")
	addPathFlags(f)
}

// readClusterSettings reads them into cfg; a bad --gossip-key is bad usage.
func readClusterSettings(v *viper.Viper, cfg *daemon.Config) error {
	cfg.AdvertiseAddr = v.GetString("advertise-addr")
	cfg.EtcdCACert = v.GetString("etcd-cacert")
	cfg.EtcdCert = v.GetString("etcd-cert")
	cfg.EtcdKey = v.GetString("etcd-key")
	cfg.EtcdUser = v.GetString("etcd-user")
	cfg.EtcdPassword = v.GetString("etcd-password")
	// Read once: nothing the agent starts (a declare without a sandbox)
	// inherits it; the roles get it by file (rolecfg.EtcdPasswordPath).
	_ = os.Unsetenv(rolecfg.EtcdPasswordEnv)
	cfg.TLS = pki.Files{CA: v.GetString("tls-ca"), Cert: v.GetString("tls-cert"), Key: v.GetString("tls-key")}
	cfg.Insecure = v.GetBool("insecure")
	cfg.TokenMaxLifetime = v.GetDuration("token-max-lifetime")
	if cfg.TokenMaxLifetime <= 0 {
		return fmt.Errorf("%w: --token-max-lifetime %s: want a positive duration, e.g. 24h", errUsage, cfg.TokenMaxLifetime)
	}
	if k := v.GetString("gossip-key"); k != "" {
		key, err := pki.ParseGossipKey(k)
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		cfg.GossipKey = key
		if f, ok := strings.CutPrefix(k, "@"); ok {
			cfg.GossipKeyFile = absOrEmpty(f)
		}
	}
	readPathSettings(v, cfg)
	return nil
}
