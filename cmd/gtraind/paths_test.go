package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// --allowed-path repeats on the command line, is a list in the config file
// and comma-separated in GTRAIN_ALLOWED_PATH; flag over env over file.
func TestAgentAllowedPaths(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(conf, []byte("dev: true\nallowed-path: [/srv/data, /srv/ckpt]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  string
		args []string
		want []string
	}{
		{"", []string{"--config", conf}, []string{"/srv/data", "/srv/ckpt"}},
		{"/env/a,/env/b", []string{"--config", conf}, []string{"/env/a", "/env/b"}},
		{"/env/a", []string{"--config", conf, "--allowed-path", "/x", "--allowed-path", "/y"}, []string{"/x", "/y"}},
		{"", []string{"--dev"}, nil},
	} {
		t.Setenv("GTRAIN_ALLOWED_PATH", tc.env)
		if tc.env == "" {
			os.Unsetenv("GTRAIN_ALLOWED_PATH")
		}
		cfg, err := agentSettings(t, tc.args...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if !slices.Equal(cfg.AllowedPaths, tc.want) {
			t.Errorf("env %q args %v: AllowedPaths %q, want %q", tc.env, tc.args, cfg.AllowedPaths, tc.want)
		}
	}
}
