package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

const testConfig = `current-context: prod
contexts:
  - name: prod
    endpoint: prod.example.org:7164
    tls:
      ca: certs/ca.pem
  - name: dev
    endpoint: 127.0.0.1:9000
`

// settingsFor resolves settings as gctl would for these global flags and
// environment, with home as the user's home directory.
func settingsFor(t *testing.T, home string, env map[string]string, args ...string) (settings, error) {
	t.Helper()
	for _, k := range []string{envAddr, envConfig, envContext} {
		t.Setenv(k, env[k])
	}
	fs := pflag.NewFlagSet("gctl", pflag.ContinueOnError)
	fs.String("addr", defaultAddr, "")
	fs.String("config", defaultConfigPath, "")
	fs.String("context", "", "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return resolveSettings(fs.Lookup("addr"), fs.Lookup("config"), fs.Lookup("context"), home)
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAddressPrecedence(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".gtrain", "config.yaml"), testConfig)
	emptyHome := t.TempDir()

	tests := []struct {
		name     string
		home     string
		env      map[string]string
		args     []string
		wantAddr string
		wantFrom string
	}{
		{"default when there is no config file", emptyHome, nil, nil, defaultAddr, "default"},
		{"config file over default", home, nil, nil, "prod.example.org:7164", `context "prod"`},
		{"env over config file", home, map[string]string{envAddr: "10.0.0.2:7164"}, nil, "10.0.0.2:7164", envAddr},
		{"flag over env", home, map[string]string{envAddr: "10.0.0.2:7164"}, []string{"--addr", "10.0.0.3:7164"}, "10.0.0.3:7164", "--addr"},
		{"flag over default", emptyHome, nil, []string{"--addr=10.0.0.4:1"}, "10.0.0.4:1", "--addr"},
		{"--context picks another context", home, nil, []string{"--context", "dev"}, "127.0.0.1:9000", `context "dev"`},
		{"GCTL_CONTEXT picks another context", home, map[string]string{envContext: "dev"}, nil, "127.0.0.1:9000", `context "dev"`},
		{"--context over GCTL_CONTEXT", home, map[string]string{envContext: "dev"}, []string{"--context", "prod"}, "prod.example.org:7164", `context "prod"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := settingsFor(t, tt.home, tt.env, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if s.Addr != tt.wantAddr {
				t.Errorf("addr = %q, want %q", s.Addr, tt.wantAddr)
			}
			if !strings.Contains(s.AddrFrom, tt.wantFrom) {
				t.Errorf("addr from %q, want it to mention %q", s.AddrFrom, tt.wantFrom)
			}
		})
	}
}

func TestConfigFileLocationPrecedence(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".gtrain", "config.yaml"), "current-context: a\ncontexts: [{name: a, endpoint: 'home:1'}]\n")
	byEnv := writeFile(t, filepath.Join(t.TempDir(), "env.yaml"), "current-context: b\ncontexts: [{name: b, endpoint: 'env:2'}]\n")
	byFlag := writeFile(t, filepath.Join(t.TempDir(), "flag.yaml"), "current-context: c\ncontexts: [{name: c, endpoint: 'flag:3'}]\n")

	s, err := settingsFor(t, home, map[string]string{envConfig: byEnv}, "--config", byFlag)
	if err != nil || s.Addr != "flag:3" {
		t.Errorf("--config over GCTL_CONFIG: addr %q, err %v; want flag:3", s.Addr, err)
	}
	s, err = settingsFor(t, home, map[string]string{envConfig: byEnv})
	if err != nil || s.Addr != "env:2" {
		t.Errorf("GCTL_CONFIG over ~/.gtrain/config.yaml: addr %q, err %v; want env:2", s.Addr, err)
	}
	s, err = settingsFor(t, home, nil)
	if err != nil || s.Addr != "home:1" {
		t.Errorf("~/.gtrain/config.yaml: addr %q, err %v; want home:1", s.Addr, err)
	}
}

func TestTLSPathsAreRelativeToTheConfigFile(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, filepath.Join(dir, "gctl.yaml"), testConfig)
	s, err := settingsFor(t, t.TempDir(), nil, "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "certs", "ca.pem"); s.TLS.CA != want {
		t.Errorf("tls.ca = %q, want %q", s.TLS.CA, want)
	}
	// The context's TLS stays when only the endpoint is overridden.
	s, err = settingsFor(t, t.TempDir(), map[string]string{envAddr: "other:1"}, "--config", cfg)
	if err != nil || !s.TLS.enabled() || s.Addr != "other:1" {
		t.Errorf("GCTL_ADDR with a TLS context: %+v, %v", s, err)
	}
	if _, err := transportCredentials(s.TLS); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "tls.ca") {
		t.Errorf("missing CA file: err = %v, want ErrConfig naming tls.ca", err)
	}
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		config  string // file content; "" means the named file does not exist
		args    []string
		wantMsg []string
	}{
		{"named file missing", "", nil, []string{"missing.yaml", "--config"}},
		{"unknown context", "current-context: nope\ncontexts: [{name: a, endpoint: 'x:1'}]\n", nil, []string{`context "nope"`, "defined: a"}},
		{"unknown --context", testConfig, []string{"--context", "qa"}, []string{`context "qa"`, "prod, dev"}},
		{"unknown key", "current-context: a\nendpoint: x:1\ncontexts: [{name: a, endpoint: 'x:1'}]\n", nil, []string{"endpoint", "known keys"}},
		{"context without endpoint", "current-context: a\ncontexts: [{name: a}]\n", nil, []string{`context "a"`, "no endpoint"}},
		{"cert without key", "current-context: a\ncontexts: [{name: a, endpoint: 'x:1', tls: {cert: c.pem}}]\n", nil, []string{"tls.cert and tls.key"}},
		{"not yaml", "contexts: [\n", nil, []string{"not valid YAML"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "missing.yaml")
			if tt.config != "" {
				path = writeFile(t, filepath.Join(dir, "c"+string(rune('0'+i))+".yaml"), tt.config)
			}
			_, err := settingsFor(t, t.TempDir(), nil, append([]string{"--config", path}, tt.args...)...)
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("err = %v, want ErrConfig", err)
			}
			if exitCode(err) != exitRejected {
				t.Errorf("exit code %d, want %d", exitCode(err), exitRejected)
			}
			for _, w := range append(tt.wantMsg, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err.Error(), w)
				}
			}
		})
	}
}
