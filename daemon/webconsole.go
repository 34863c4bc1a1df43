package daemon

import (
	"fmt"
	"net"

	"github.com/gtrain/gtrain/daemon/console"
)

// serveConsole serves the web console on UIAddr, if set, until the agent
// closes. It calls this agent's Control API at the address the node
// published, which the node certificate covers.
func (a *agent) serveConsole() error {
	if a.cfg.UIAddr == "" {
		return nil
	}
	hosts := []string{a.cfg.NodeName, a.cfg.AdvertiseAddr}
	if host, _, err := net.SplitHostPort(a.cfg.UIAddr); err == nil && !IsWildcardHost(host) {
		hosts = append(hosts, host)
	}
	c, err := console.New(console.Config{APIAddr: a.rec.APIAddr, TLS: a.cfg.TLS, TokenMaxLifetime: a.cfg.TokenMaxLifetime, Hosts: hosts, Clock: a.clock, Log: a.log})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	lis, err := net.Listen("tcp", a.cfg.UIAddr)
	if err != nil {
		c.Close()
		return fmt.Errorf("web console (--ui-addr) %s: %w", a.cfg.UIAddr, err)
	}
	go func() {
		if err := c.Serve(lis); err != nil {
			a.log.Error("web console stopped", "err", err)
		}
	}()
	a.closers = append(a.closers, c.Close)
	scheme := "http"
	if a.cfg.TLS.Enabled() {
		scheme = "https"
	}
	a.log.Info("serving the web console", "url", scheme+"://"+lis.Addr().String()+"/")
	return nil
}
