package coord

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/internal/testing/etcdtest"
)

func TestEmbeddedConfigValidate(t *testing.T) {
	good := EmbeddedConfig{Dir: "/tmp/x", ClientAddr: "127.0.0.1:1", PeerAddr: "127.0.0.1:2"}
	if err := good.Validate(); err != nil {
		t.Fatalf("Validate of a good config: %v", err)
	}
	cases := []struct {
		field string
		edit  func(*EmbeddedConfig)
	}{
		{"Dir", func(c *EmbeddedConfig) { c.Dir = "" }},
		{"ClientAddr", func(c *EmbeddedConfig) { c.ClientAddr = "" }},
		{"PeerAddr", func(c *EmbeddedConfig) { c.PeerAddr = "" }},
	}
	for _, c := range cases {
		cfg := good
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("Validate without %s = %v, want an error naming it", c.field, err)
		}
		if _, err := StartEmbedded(cfg, nil); err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("StartEmbedded without %s = %v, want an error naming it", c.field, err)
		}
	}
}

func TestStartEmbeddedOnBusyPortFails(t *testing.T) {
	busy := strings.TrimPrefix(etcdtest.Shared(t).Endpoint, "http://")
	peer, err := freeLocalAddr()
	if err != nil {
		t.Fatal(err)
	}
	e, err := StartEmbedded(EmbeddedConfig{Dir: filepath.Join(t.TempDir(), "etcd"), ClientAddr: busy, PeerAddr: peer}, nil)
	if err == nil {
		e.Close()
		t.Fatalf("second etcd started on busy client address %s", busy)
	}
	if !strings.Contains(err.Error(), busy) {
		t.Errorf("error %q does not name the busy address %s", err, busy)
	}
}
