package daemon

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
)

func TestResolveAdvertise(t *testing.T) {
	ips := func(s ...string) func() ([]net.IP, error) {
		return func() ([]net.IP, error) {
			var out []net.IP
			for _, a := range s {
				out = append(out, net.ParseIP(a))
			}
			return out, nil
		}
	}
	hostIPs := ips("127.0.0.1", "::1", "fe80::1", "fd00::7", "10.1.2.3", "192.168.0.9")
	for _, tc := range []struct {
		name, advertise, api, want string
	}{
		{"given", "10.9.9.9", "127.0.0.1:7164", "10.9.9.9"},
		{"host of the API", "", "10.0.0.5:7164", "10.0.0.5"},
		{"loopback API: a loopback cluster", "", "127.0.0.1:7164", "127.0.0.1"},
		{"API by name", "", "node1.example:7164", "node1.example"},
		{"wildcard API: first non-loopback IPv4", "", "0.0.0.0:7164", "10.1.2.3"},
		{"empty host", "", ":7164", "10.1.2.3"},
		{"IPv6 wildcard", "", "[::]:7164", "10.1.2.3"},
	} {
		got, err := resolveAdvertise(Config{AdvertiseAddr: tc.advertise, APIAddr: tc.api}, hostIPs)
		if err != nil || got != tc.want {
			t.Errorf("%s: resolveAdvertise = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	if got, err := resolveAdvertise(Config{APIAddr: "0.0.0.0:1"}, ips("127.0.0.1", "fe80::1", "fd00::7")); err != nil || got != "fd00::7" {
		t.Errorf("IPv6 only: %q, %v; want fd00::7", got, err)
	}
	_, err := resolveAdvertise(Config{APIAddr: "0.0.0.0:1"}, ips("127.0.0.1", "fe80::1"))
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "--advertise-addr") {
		t.Errorf("no usable address: %v, want ErrInvalidConfig naming --advertise-addr", err)
	}
}

// A loopback address is published only when the whole cluster is on
// loopback.
func TestCheckLoopback(t *testing.T) {
	for _, tc := range []struct {
		name, advertise, gossip string
		etcd                    []string
		want                    string // "" = accepted
	}{
		{"all on loopback", "127.0.0.1", "127.0.0.1:7946", []string{"http://127.0.0.1:2379", "localhost:2380"}, ""},
		{"dev (no endpoints)", "127.0.0.1", "127.0.0.1:7946", nil, ""},
		{"hosts", "10.0.0.1", "10.0.0.1:7946", []string{"10.0.0.2:2379"}, ""},
		{"wildcard gossip", "10.0.0.1", "0.0.0.0:7946", []string{"https://10.0.0.2:2379"}, ""},
		{"loopback roles, remote etcd", "127.0.0.1", "127.0.0.1:7946", []string{"127.0.0.1:2379", "https://10.0.0.2:2379"}, "--advertise-addr"},
		{"localhost roles, remote etcd", "localhost", "127.0.0.1:7946", []string{"etcd.example:2379"}, "--advertise-addr"},
		{"loopback gossip, remote roles", "10.0.0.1", "127.0.0.1:7946", []string{"10.0.0.2:2379"}, "--gossip-addr"},
	} {
		err := checkLoopback(tc.advertise, tc.gossip, tc.etcd)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want accepted", tc.name, err)
		case tc.want != "" && (!errors.Is(err, ErrLoopbackAdvertise) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want ErrLoopbackAdvertise naming %s", tc.name, err, tc.want)
		}
	}
}

func TestPublished(t *testing.T) {
	for _, tc := range []struct{ bound, advertise, want string }{
		{"10.0.0.1:7164", "10.0.0.9", "10.0.0.1:7164"},
		{"0.0.0.0:7164", "10.0.0.9", "10.0.0.9:7164"},
		{"[::]:7164", "fd00::9", "[fd00::9]:7164"},
	} {
		addr, _ := net.ResolveTCPAddr("tcp", tc.bound)
		if got := published(addr, tc.advertise); got != tc.want {
			t.Errorf("published(%s, %s) = %s, want %s", tc.bound, tc.advertise, got, tc.want)
		}
	}
}

func TestConfigValidateCluster(t *testing.T) {
	remote := DefaultConfig()
	remote.EtcdEndpoints = []string{"10.0.0.1:2379"}
	remote.Insecure = true // no TLS files here: a plaintext API must be asked for
	for _, tc := range []struct {
		name     string
		edit     func(*Config)
		contains string
	}{
		{"advertise with a port", func(c *Config) { c.AdvertiseAddr = "10.0.0.1:7164" }, "--advertise-addr"},
		{"wildcard advertise", func(c *Config) { c.AdvertiseAddr = "0.0.0.0" }, "wildcard"},
		{"TLS files with --dev", func(c *Config) { c.EtcdEndpoints, c.Dev, c.EtcdCACert = nil, true, "/ca.pem" }, "--dev"},
		{"cert without key", func(c *Config) { c.EtcdCert = "/c.pem" }, "--etcd-key"},
		{"password without user", func(c *Config) { c.EtcdPassword = "x" }, "--etcd-user"},
		{"http endpoint with TLS", func(c *Config) { c.EtcdEndpoints, c.EtcdCACert = []string{"http://e:2379"}, "/ca.pem" }, "https://"},
	} {
		c := remote
		tc.edit(&c)
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.contains) {
			t.Errorf("%s: %v, want ErrInvalidConfig naming %q", tc.name, err, tc.contains)
		}
	}
	remote.AdvertiseAddr, remote.EtcdCACert, remote.EtcdUser, remote.EtcdPassword = "node1", "/ca.pem", "u", "p"
	if err := remote.Validate(); err != nil {
		t.Errorf("a valid cluster config: %v", err)
	}
}

// An agent bound to wildcards publishes its advertise address in its node
// record, for the API and the gossip ring alike.
func TestAgentPublishesAdvertiseForWildcards(t *testing.T) {
	t.Parallel()
	endpoint := startEtcd(t)
	cfg := testConfig(t, "wild", endpoint)
	cfg.APIAddr, cfg.GossipAddr, cfg.AdvertiseAddr = "0.0.0.0:0", "0.0.0.0:0", "127.0.0.1"
	cfg.Insecure = true // a wildcard API without TLS
	a := startAgent(t, cfg)
	var rec schema.NodeRecord
	if _, err := coord.GetJSON(t.Context(), etcdClient(t, endpoint), coord.NodeKey("wild"), &rec); err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{rec.APIAddr, rec.GossipAddr, a.addr} {
		host, port, err := net.SplitHostPort(addr)
		if err != nil || host != "127.0.0.1" || port == "0" {
			t.Errorf("published %q (record %+v), want 127.0.0.1 with the bound port", addr, rec)
		}
	}
}
