package main

import (
	"github.com/gtrain/gtrain/daemon"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// addClusterFlags are the agent's settings for a cluster of several
// machines (SPEC §2): the address it advertises and its access to an
// external etcd.
func addClusterFlags(f *pflag.FlagSet) {
	f.String("advertise-addr", "", "host (no port) of this machine that the roles bind and publish to other nodes (default: the host of --api-addr, or the first non-loopback address when that is a wildcard)")
	f.String("etcd-cacert", "", "PEM CA file that verifies the etcd members (TLS)")
	f.String("etcd-cert", "", "PEM client certificate for etcd (with --etcd-key)")
	f.String("etcd-key", "", "PEM key of --etcd-cert")
	f.String("etcd-user", "", "etcd user (etcd auth enabled)")
	f.String("etcd-password", "", "password of --etcd-user; prefer GTRAIN_ETCD_PASSWORD or the config file (a command line is visible to every user)")
	addPathFlags(f)
}

func readClusterSettings(v *viper.Viper, cfg *daemon.Config) {
	cfg.AdvertiseAddr = v.GetString("advertise-addr")
	cfg.EtcdCACert = v.GetString("etcd-cacert")
	cfg.EtcdCert = v.GetString("etcd-cert")
	cfg.EtcdKey = v.GetString("etcd-key")
	cfg.EtcdUser = v.GetString("etcd-user")
	cfg.EtcdPassword = v.GetString("etcd-password")
	readPathSettings(v, cfg)
}
