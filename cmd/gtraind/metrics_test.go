package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --metrics-addr comes from the flag, then GTRAIN_METRICS_ADDR, then the
// config file's metrics-addr; a value that is not HOST:PORT is a usage error.
func TestAgentMetricsAddr(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(conf, []byte("dev: true\nmetrics-addr: 127.0.0.1:9001\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := agentSettings(t, "--config", conf)
	if err != nil || cfg.MetricsAddr != "127.0.0.1:9001" {
		t.Fatalf("from the file: %q, %v", cfg.MetricsAddr, err)
	}
	t.Setenv("GTRAIN_METRICS_ADDR", "127.0.0.1:9002")
	if cfg, _ := agentSettings(t, "--config", conf); cfg.MetricsAddr != "127.0.0.1:9002" {
		t.Errorf("env over file: %q", cfg.MetricsAddr)
	}
	if cfg, _ := agentSettings(t, "--config", conf, "--metrics-addr", "127.0.0.1:9003"); cfg.MetricsAddr != "127.0.0.1:9003" {
		t.Errorf("flag over env: %q", cfg.MetricsAddr)
	}
	_, err = agentSettings(t, "--dev", "--metrics-addr", "9164")
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--metrics-addr") {
		t.Errorf("--metrics-addr 9164: %v, want a usage error naming the flag", err)
	}
}
