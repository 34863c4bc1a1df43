package daemon

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gtrain/gtrain/api"
)

// Without TLS, --dev or --insecure an agent may serve its API on a Unix
// socket of mode 0600; its callers are the local admin, recorded as such.
func TestAPIOnUnixSocket(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "gtsock") // short: socket paths are limited to 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "api.sock")
	cfg := testConfig(t, "node-a", startEtcd(t))
	cfg.Insecure = false
	cfg.APIAddr = "unix://" + sock
	a := startAgent(t, cfg)
	if a.addr != cfg.APIAddr {
		t.Errorf("published API address %q, want %q", a.addr, cfg.APIAddr)
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 || fi.Mode()&os.ModeSocket == 0 {
		t.Errorf("socket %s: %v %v; want a socket of mode 0600", sock, fi.Mode(), err)
	}
	ctx := context.Background()
	if err := submitAs(t, ctx, a.client, "sleep-local"); err != nil {
		t.Fatalf("the local admin submits: %v", err)
	}
	if _, err := a.client.StopJob(ctx, &api.StopJobRequest{Name: "sleep-local"}); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if evs := events(t, etcdClient(t, cfg.EtcdEndpoints[0]), "sleep-local"); !slices.Contains(evs, "job submitted by local (admin) via node-a") {
		t.Errorf("events %q lack the local admin's submit", evs)
	}
	a.stop(t)
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket outlives the agent: %v", err)
	}
}
