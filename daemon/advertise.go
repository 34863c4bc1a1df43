package daemon

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// ErrLoopbackAdvertise means this node would publish a loopback address to
// a cluster that spans hosts: the roles of other hosts would dial their own
// loopback.
var ErrLoopbackAdvertise = errors.New("loopback address in a cluster that spans hosts")

// resolveAdvertise is the host this node's roles bind and publish (see
// Config.AdvertiseAddr). hostIPs lists the addresses of this host's
// interfaces that are up, in interface order.
func resolveAdvertise(cfg Config, hostIPs func() ([]net.IP, error)) (string, error) {
	if cfg.AdvertiseAddr != "" {
		return cfg.AdvertiseAddr, nil
	}
	if _, unix := apiSocket(cfg.APIAddr); unix {
		return "127.0.0.1", nil // a one-host cluster; others pass --advertise-addr
	}
	host, _, err := net.SplitHostPort(cfg.APIAddr)
	if err != nil {
		return "", fmt.Errorf("%w: APIAddr (--api-addr) %q: %v", ErrInvalidConfig, cfg.APIAddr, err)
	}
	if !IsWildcardHost(host) {
		return host, nil
	}
	ips, err := hostIPs()
	if err != nil {
		return "", fmt.Errorf("%w: --api-addr %s is a wildcard and this host's addresses are unknown (%v): pass --advertise-addr",
			ErrInvalidConfig, cfg.APIAddr, err)
	}
	if ip := firstNonLoopback(ips); ip != nil {
		return ip.String(), nil
	}
	return "", fmt.Errorf("%w: --api-addr %s is a wildcard and this host has no non-loopback address: pass --advertise-addr",
		ErrInvalidConfig, cfg.APIAddr)
}

// firstNonLoopback prefers an IPv4 address to an IPv6 one, and skips
// link-local addresses, which need a zone to be dialled.
func firstNonLoopback(ips []net.IP) net.IP {
	var v6 net.IP
	for _, ip := range ips {
		if !ip.IsGlobalUnicast() {
			continue
		}
		if ip.To4() != nil {
			return ip
		}
		if v6 == nil {
			v6 = ip
		}
	}
	return v6
}

// interfaceIPs lists the addresses of this host's interfaces that are up.
func interfaceIPs() ([]net.IP, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	var ips []net.IP
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				ips = append(ips, n.IP)
			}
		}
	}
	return ips, nil
}

// IsWildcardHost reports whether host ("" or an unspecified IP) binds every
// address: nothing another host can dial.
func IsWildcardHost(host string) bool {
	ip := net.ParseIP(host)
	return host == "" || (ip != nil && ip.IsUnspecified())
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkLoopback refuses a loopback advertise or gossip address when etcd is
// not on loopback (then the cluster spans hosts), and a loopback gossip
// address when the roles advertise another: peers could not reach it.
func checkLoopback(advertise, gossipAddr string, etcdEndpoints []string) error {
	remote := ""
	for _, e := range etcdEndpoints {
		if h := endpointHost(e); !isLoopback(h) {
			remote = e
			break
		}
	}
	gossipHost, _, _ := net.SplitHostPort(gossipAddr)
	switch {
	case isLoopback(advertise) && remote != "":
		return fmt.Errorf("%w: this node would advertise %s while etcd is at %s: pass --advertise-addr (or --api-addr) with an address of this host the other nodes reach",
			ErrLoopbackAdvertise, advertise, remote)
	case isLoopback(gossipHost) && !isLoopback(advertise):
		return fmt.Errorf("%w: --gossip-addr %s is on loopback while this node advertises %s: use %s or 0.0.0.0 with a port",
			ErrLoopbackAdvertise, gossipAddr, advertise, advertise)
	}
	return nil
}

// endpointHost is the host of an etcd endpoint, URL or HOST:PORT.
func endpointHost(e string) string {
	if strings.Contains(e, "://") {
		if u, err := url.Parse(e); err == nil {
			return u.Hostname()
		}
	}
	if h, _, err := net.SplitHostPort(e); err == nil {
		return h
	}
	return e
}

// published is the address to publish for a listener bound to bound: its
// own, or the advertise host with its port when it is bound to a wildcard.
func published(bound net.Addr, advertise string) string {
	if bound.Network() == "unix" {
		return unixPrefix + bound.String()
	}
	host, port, err := net.SplitHostPort(bound.String())
	if err != nil || !IsWildcardHost(host) {
		return bound.String()
	}
	return net.JoinHostPort(advertise, port)
}
