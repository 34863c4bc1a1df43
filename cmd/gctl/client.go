package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/gtrain/gtrain/api"
)

const (
	defaultAddr       = "127.0.0.1:7164"
	defaultConfigPath = "~/.gtrain/config.yaml"

	envAddr    = "GCTL_ADDR"
	envConfig  = "GCTL_CONFIG"
	envContext = "GCTL_CONTEXT"
)

// configFile is ~/.gtrain/config.yaml: named clusters, like paddlecloud's
// datacenters, and the one in use.
type configFile struct {
	CurrentContext string          `mapstructure:"current-context"`
	Contexts       []configContext `mapstructure:"contexts"`
}

type configContext struct {
	Name     string    `mapstructure:"name"`
	Endpoint string    `mapstructure:"endpoint"`
	TLS      tlsConfig `mapstructure:"tls"`
	// A bearer token (`gtraind cert issue --client`), inline or in a file,
	// for clients without a certificate; sent only over TLS.
	Token     string `mapstructure:"token"`
	TokenFile string `mapstructure:"token_file"`
}

type tlsConfig struct {
	CA   string `mapstructure:"ca"`
	Cert string `mapstructure:"cert"`
	Key  string `mapstructure:"key"`
}

func (t tlsConfig) enabled() bool { return t.CA != "" || t.Cert != "" || t.Key != "" }

// settings is how gctl reaches the agent, after flag > env > config > default.
type settings struct {
	Addr     string
	AddrFrom string // "--addr", "GCTL_ADDR", `context "x" in FILE` or "default"
	Context  string // empty when no context applies
	TLS      tlsConfig
	Token    bearer // the context's token, if any
}

// resolveSettings applies flag > env > config file > default to the agent
// address. addrFlag, configFlag and contextFlag are the root's persistent
// flags; home expands a leading "~/" in paths.
func resolveSettings(addrFlag, configFlag, contextFlag *pflag.Flag, home string) (settings, error) {
	v := viper.New()
	for key, bind := range map[string]struct {
		flag *pflag.Flag
		env  string
	}{
		"addr":    {addrFlag, envAddr},
		"config":  {configFlag, envConfig},
		"context": {contextFlag, envContext},
	} {
		if err := v.BindPFlag(key, bind.flag); err != nil {
			return settings{}, fmt.Errorf("bind --%s: %w", key, err)
		}
		if err := v.BindEnv(key, bind.env); err != nil {
			return settings{}, fmt.Errorf("bind %s: %w", bind.env, err)
		}
	}

	configPath := expandHome(v.GetString("config"), home)
	configNamed := configFlag.Changed || os.Getenv(envConfig) != ""
	cfg, err := readConfig(configPath, configNamed)
	if err != nil {
		return settings{}, err
	}

	s := settings{Addr: defaultAddr, AddrFrom: "default"}
	contextName := v.GetString("context")
	if contextName == "" {
		contextName = cfg.CurrentContext
	}
	if contextName != "" {
		ctx, err := findContext(cfg, contextName, configPath)
		if err != nil {
			return settings{}, err
		}
		s.Context = ctx.Name
		s.Addr = ctx.Endpoint
		s.AddrFrom = fmt.Sprintf("context %q in %s", ctx.Name, configPath)
		s.TLS = resolveTLSPaths(ctx.TLS, filepath.Dir(configPath), home)
		s.Token = bearer{token: strings.TrimSpace(ctx.Token), file: resolvePath(ctx.TokenFile, filepath.Dir(configPath), home),
			context: ctx.Name, config: configPath}
	}

	// The context's endpoint sits in viper's default layer, under the flag
	// and the environment.
	v.SetDefault("addr", s.Addr)
	s.Addr = v.GetString("addr")
	switch {
	case addrFlag.Changed:
		s.AddrFrom = "--addr"
	case os.Getenv(envAddr) != "":
		s.AddrFrom = envAddr
	}
	if strings.TrimSpace(s.Addr) == "" {
		return settings{}, usagef("the agent address from %s is empty: give HOST:PORT with --addr or %s", s.AddrFrom, envAddr)
	}
	return s, nil
}

// readConfig reads the config file. A missing file is fine unless the user
// named it explicitly.
func readConfig(path string, named bool) (configFile, error) {
	var cfg configFile
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) && !named {
			return cfg, nil
		}
		return cfg, fmt.Errorf("%w: config file %s: %v (fix the path given with --config or %s)", ErrConfig, path, err, envConfig)
	}
	v := viper.New()
	v.SetConfigFile(path)
	v.SetConfigType("yaml")
	if err := v.ReadInConfig(); err != nil {
		return cfg, fmt.Errorf("%w: config file %s is not valid YAML: %v", ErrConfig, path, err)
	}
	if err := v.UnmarshalExact(&cfg); err != nil {
		return cfg, fmt.Errorf("%w: config file %s: %v (known keys: current-context, contexts[].name, .endpoint, .tls.ca, .tls.cert, .tls.key, .token, .token_file)",
			ErrConfig, path, err)
	}
	return cfg, nil
}

func findContext(cfg configFile, name, path string) (configContext, error) {
	names := make([]string, 0, len(cfg.Contexts))
	for _, c := range cfg.Contexts {
		if c.Name == name {
			if strings.TrimSpace(c.Endpoint) == "" {
				return c, fmt.Errorf("%w: context %q in %s has no endpoint: add `endpoint: HOST:PORT`", ErrConfig, name, path)
			}
			if (c.TLS.Cert == "") != (c.TLS.Key == "") {
				return c, fmt.Errorf("%w: context %q in %s: tls.cert and tls.key must be given together", ErrConfig, name, path)
			}
			if c.Token != "" && c.TokenFile != "" {
				return c, fmt.Errorf("%w: context %q in %s has both token and token_file: keep one", ErrConfig, name, path)
			}
			return c, nil
		}
		names = append(names, c.Name)
	}
	return configContext{}, fmt.Errorf("%w: context %q is not defined in %s (defined: %s); fix current-context or --context",
		ErrConfig, name, path, strings.Join(names, ", "))
}

func resolveTLSPaths(t tlsConfig, dir, home string) tlsConfig {
	return tlsConfig{CA: resolvePath(t.CA, dir, home), Cert: resolvePath(t.Cert, dir, home), Key: resolvePath(t.Key, dir, home)}
}

// resolvePath is a path of the config file: "~/" is home, and a relative
// path is relative to the file's directory dir.
func resolvePath(p, dir, home string) string {
	if p == "" {
		return ""
	}
	p = expandHome(p, home)
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return p
}

func expandHome(path, home string) string {
	if path == "~" {
		return home
	}
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		return filepath.Join(home, rest)
	}
	return path
}

// transportCredentials is TLS when the context names any TLS file, plain
// TCP otherwise (the single-node default listens on loopback).
func transportCredentials(t tlsConfig) (credentials.TransportCredentials, error) {
	if !t.enabled() {
		return insecure.NewCredentials(), nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.CA != "" {
		pem, err := os.ReadFile(t.CA)
		if err != nil {
			return nil, fmt.Errorf("%w: tls.ca: %v", ErrConfig, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: tls.ca %s holds no PEM certificate", ErrConfig, t.CA)
		}
		conf.RootCAs = pool
	}
	if t.Cert != "" {
		pair, err := tls.LoadX509KeyPair(t.Cert, t.Key)
		if err != nil {
			return nil, fmt.Errorf("%w: tls.cert %s / tls.key %s: %v", ErrConfig, t.Cert, t.Key, err)
		}
		conf.Certificates = []tls.Certificate{pair}
	}
	return credentials.NewTLS(conf), nil
}

// dialAgent connects lazily: no packet is sent before the first call.
func dialAgent(s settings) (api.ControlClient, io.Closer, error) {
	creds, err := transportCredentials(s.TLS)
	if err != nil {
		return nil, nil, err
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	token, err := s.Token.credentials(s.TLS.enabled())
	if err != nil {
		return nil, nil, err
	}
	if token != nil {
		opts = append(opts, grpc.WithPerRPCCredentials(token))
	}
	conn, err := grpc.NewClient(s.Addr, opts...)
	if err != nil {
		return nil, nil, usagef("agent address %q (from %s) is not usable: %v; give HOST:PORT", s.Addr, s.AddrFrom, err)
	}
	return api.NewControlClient(conn), conn, nil
}
