package embedetcd

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestConfig(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "parent", "etcd")
	for _, tc := range []struct {
		name     string
		c        Config
		wantErr  string
		wantName string
	}{
		{"default name", Config{Dir: dir, ClientAddr: "127.0.0.1:1", PeerAddr: "127.0.0.1:2"}, "", "default"},
		{"named", Config{Dir: dir + "/", ClientAddr: "127.0.0.1:1", PeerAddr: "127.0.0.1:2", Name: "n1"}, "", "n1"},
		{"bad client", Config{Dir: dir, ClientAddr: "127.0.0.1:x y", PeerAddr: "127.0.0.1:2"}, "client address", ""},
		{"bad peer", Config{Dir: dir, ClientAddr: "127.0.0.1:1", PeerAddr: "%zz"}, "peer address", ""},
	} {
		cfg, err := config(tc.c)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err = %v, want one naming the %s", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if cfg.Dir != dir || logFile(cfg) != dir+".log" || cfg.Name != tc.wantName {
			t.Errorf("%s: dir %s, log %s, name %s; want %s, %s.log, %s", tc.name, cfg.Dir, logFile(cfg), cfg.Name, dir, dir, tc.wantName)
		}
		if got := cfg.ListenClientUrls[0].String(); got != "http://127.0.0.1:1" || cfg.AdvertiseClientUrls[0].String() != got {
			t.Errorf("%s: client URLs %v / %v", tc.name, cfg.ListenClientUrls, cfg.AdvertiseClientUrls)
		}
		if cfg.AutoCompactionMode != "periodic" || cfg.AutoCompactionRetention != "10m0s" {
			t.Errorf("%s: auto-compaction %q %q, want periodic 10m0s", tc.name, cfg.AutoCompactionMode, cfg.AutoCompactionRetention)
		}
		if want := tc.wantName + "=http://127.0.0.1:2"; cfg.InitialCluster != want {
			t.Errorf("%s: initial cluster %q, want %q", tc.name, cfg.InitialCluster, want)
		}
	}
}
