package coord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrEtcdConfig is wrapped by every rejection of an EtcdConfig; the message
// names the setting.
var ErrEtcdConfig = errors.New("invalid etcd access")

// EtcdConfig is how to reach an etcd cluster: its members and the
// credentials it asks for (docs/reference.md#gtraind-agent: --etcd-endpoints, --etcd-cacert,
// --etcd-cert, --etcd-key, --etcd-user, --etcd-password).
type EtcdConfig struct {
	// Endpoints are the members, HOST:PORT or URLs; the client balances
	// over all of them, so losing one member of three goes unnoticed.
	Endpoints []string
	// CACert verifies the members' certificates; with it, endpoints
	// without a scheme are dialled over TLS.
	CACert string
	// Cert and Key are this client's certificate (etcd --client-cert-auth).
	Cert, Key string
	// User and Password authenticate to an etcd with auth enabled.
	User, Password string
}

// TLS reports whether the members are dialled over TLS.
func (c EtcdConfig) TLS() bool { return c.CACert != "" || c.Cert != "" || c.Key != "" }

// Validate names the first bad setting.
func (c EtcdConfig) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrEtcdConfig}, args...)...)
	}
	if len(c.Endpoints) == 0 {
		return bad("no etcd endpoints given (--etcd-endpoints)")
	}
	if (c.Cert == "") != (c.Key == "") {
		return bad("--etcd-cert and --etcd-key go together (got cert %q, key %q)", c.Cert, c.Key)
	}
	if c.Password != "" && c.User == "" {
		return bad("--etcd-password without --etcd-user")
	}
	for _, e := range c.Endpoints {
		if c.TLS() && strings.HasPrefix(e, "http://") {
			return bad("endpoint %s is plain http but TLS files are given: write https:// or HOST:PORT", e)
		}
	}
	return nil
}

// urls gives every endpoint a scheme: https with TLS, http without.
func (c EtcdConfig) urls() []string {
	scheme := "http://"
	if c.TLS() {
		scheme = "https://"
	}
	out := make([]string, len(c.Endpoints))
	for i, e := range c.Endpoints {
		if !strings.Contains(e, "://") {
			e = scheme + e
		}
		out[i] = e
	}
	return out
}

// clientConfig is the etcd client's configuration. Keep-alives notice a
// member that vanished without closing its connections (a crashed host)
// within seconds, so the balancer moves on to the others.
func (c EtcdConfig) clientConfig(log *slog.Logger) (clientv3.Config, error) {
	cfg := clientv3.Config{
		Endpoints:            c.urls(),
		DialTimeout:          5 * time.Second,
		DialKeepAliveTime:    5 * time.Second,
		DialKeepAliveTimeout: 3 * time.Second,
		Username:             c.User,
		Password:             c.Password,
		Logger:               zapToSlog(log),
	}
	if c.TLS() {
		info := transport.TLSInfo{TrustedCAFile: c.CACert, CertFile: c.Cert, KeyFile: c.Key}
		tlsCfg, err := info.ClientConfig()
		if err != nil {
			return cfg, fmt.Errorf("%w: TLS files (--etcd-cacert %q, --etcd-cert %q, --etcd-key %q): %v",
				ErrEtcdConfig, c.CACert, c.Cert, c.Key, err)
		}
		cfg.TLS = tlsCfg
	}
	return cfg, nil
}

// Dial connects to etcd over plain connections without credentials; see
// DialConfig.
func Dial(ctx context.Context, endpoints []string, log *slog.Logger) (*clientv3.Client, error) {
	return DialConfig(ctx, EtcdConfig{Endpoints: endpoints}, log)
}

// DialConfig connects to etcd and checks that it answers. The client's own
// warnings (an endpoint that does not answer, a lost watch) go to log at
// warn level; nil drops them.
func DialConfig(ctx context.Context, c EtcdConfig, log *slog.Logger) (*clientv3.Client, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	cfg, err := c.clientConfig(log)
	if err != nil {
		return nil, err
	}
	where := strings.Join(cfg.Endpoints, ",")
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd %s: %w", where, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := cli.Get(cctx, Root+"ping"); err != nil {
		cli.Close()
		return nil, fmt.Errorf("etcd %s does not answer: %w", where, err)
	}
	return cli, nil
}

// SplitEndpoints turns "a,b" into ["http://a","http://b"], adding the scheme where missing.
func SplitEndpoints(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if !strings.Contains(e, "://") {
			e = "http://" + e
		}
		out = append(out, e)
	}
	return out
}
