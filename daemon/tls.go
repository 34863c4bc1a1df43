package daemon

import (
	"fmt"
	"net"

	"google.golang.org/grpc/credentials"

	"github.com/gtrain/gtrain/pki"
)

// validateTLS checks the transport security settings (issue 10): the TLS
// files go together, a gossip key is one memberlist takes, and a Control
// API others can reach is not served in the clear unless Insecure. (Whether
// the files load is found when the agent starts.)
func (c Config) validateTLS() error {
	if err := c.TLS.Validate(); err != nil {
		return err
	}
	switch len(c.GossipKey) {
	case 0, 16, 24, 32:
	default:
		return fmt.Errorf("GossipKey (--gossip-key) has %d bytes, want 16, 24 or 32", len(c.GossipKey))
	}
	for _, a := range []struct{ field, flag, addr string }{
		{"APIAddr", "--api-addr", c.APIAddr},
		{"UIAddr", "--ui-addr", c.UIAddr}, // the console acts as the API's anonymous admin without TLS
	} {
		host, _, err := net.SplitHostPort(a.addr)
		if _, unix := apiSocket(a.addr); unix || err != nil || c.TLS.Enabled() || c.Insecure || isLoopback(host) {
			continue // a bad or empty address is reported by Validate
		}
		return fmt.Errorf("%s (%s) %s is not loopback and no TLS is configured: give --tls-ca, --tls-cert and --tls-key (see gtraind cert), or --insecure to serve it unauthenticated in the clear", a.field, a.flag, a.addr)
	}
	if _, unix := apiSocket(c.APIAddr); !unix && !c.TLS.Enabled() && !c.Dev && !c.Insecure {
		// Without TLS nothing tells callers apart: every local user would be
		// an admin. Only a test cluster (--dev) or an admin's explicit choice
		// (--insecure) runs that way.
		return fmt.Errorf("no TLS is configured, so every caller of the API would be an unauthenticated admin: give --tls-ca, --tls-cert and --tls-key (see gtraind cert), or --api-addr unix:///PATH (a socket only this agent's user may open), or --dev for a single-node test cluster, or --insecure to serve the API unauthenticated")
	}
	if c.UIAddr != "" && !c.TLS.Enabled() && !c.Dev && !c.Insecure {
		// Without TLS the console serves every visitor as an admin, calling
		// the API as the agent (over a unix socket too): any local user, or
		// a sandboxed program, could stop and drain through it, loopback or
		// not.
		return fmt.Errorf("UIAddr (--ui-addr) %s without TLS would serve every visitor, local users and model programs included, as an admin: give --tls-ca, --tls-cert and --tls-key (see gtraind cert), or drop --ui-addr; only --dev (a test cluster) or --insecure serves the console unauthenticated", c.UIAddr)
	}
	return nil
}

// AllowAnonymous reports whether callers without credentials are served
// (as the anonymous admin): only without TLS, and only in the modes that
// say so (--dev, --insecure).
func (c Config) AllowAnonymous() bool { return !c.TLS.Enabled() && (c.Dev || c.Insecure) }

// checkKeyFiles refuses, before anything starts, a TLS or etcd key file
// its group or others may read (pki.CheckKeyFile).
func checkKeyFiles(c Config) error {
	for _, k := range []struct{ flag, path string }{{"--tls-key", c.TLS.Key}, {"--etcd-key", c.EtcdKey}} {
		if k.path == "" {
			continue
		}
		if err := pki.CheckKeyFile(k.flag, k.path); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
	}
	return nil
}

// checkNodeCert makes sure, before anything starts, that the TLS files
// load and hold a node certificate for the address this node advertises:
// peers dial that address and check it against the certificate, and would
// otherwise fail later with a handshake error far from the cause.
func checkNodeCert(c Config) error {
	if !c.TLS.Enabled() {
		return nil
	}
	if _, err := c.TLS.ServerConfig(); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	leaf, err := c.TLS.Leaf()
	if err != nil {
		return fmt.Errorf("%w: --tls-cert %s: %v", ErrInvalidConfig, c.TLS.Cert, err)
	}
	name, role := pki.Identity(leaf)
	if role != pki.RoleNode {
		return fmt.Errorf("%w: --tls-cert %s is a %q certificate of %s, not a node certificate: use gtraind cert issue --node %s",
			ErrInvalidConfig, c.TLS.Cert, role, name, c.NodeName)
	}
	if err := leaf.VerifyHostname(c.AdvertiseAddr); err != nil {
		return fmt.Errorf("%w: --tls-cert %s does not cover the address this node advertises, %s (it has %v %v): reissue it with gtraind cert issue --node %s --addr %s --force",
			ErrInvalidConfig, c.TLS.Cert, c.AdvertiseAddr, leaf.IPAddresses, leaf.DNSNames, c.NodeName, c.AdvertiseAddr)
	}
	if name != c.NodeName {
		c.Log.Warn("the node certificate names another node", "cert", c.TLS.Cert, "cert_name", name, "node", c.NodeName)
	}
	return nil
}

// warnInsecure says loudly that the API has no transport security.
func (c Config) warnInsecure() {
	if c.Insecure && !c.TLS.Enabled() {
		c.Log.Warn("INSECURE: --insecure given: the Control API, the web console (--ui-addr), the roles' RPCs and the log relay run without TLS or authentication; anyone who reaches them controls the cluster",
			"api", c.APIAddr, "ui", c.UIAddr)
	}
	if len(c.GossipKey) == 0 && !isLoopbackAddr(c.GossipAddr) {
		c.Log.Warn("gossip is not encrypted: pass --gossip-key (see gtraind cert init)", "gossip", c.GossipAddr)
	}
}

func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && isLoopback(host)
}

// peerCreds are the credentials the agent dials other agents with: its node
// certificate, or plaintext without TLS.
func peerCreds(c Config) (credentials.TransportCredentials, error) {
	return c.TLS.ClientCreds()
}
