package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/internal/testing/netcluster"
)

// TestNetnsClusterScript: deploy/netns-cluster.sh, the way to try a cluster
// on one machine, brings up three ready nodes and takes everything down
// again.
func TestNetnsClusterScript(t *testing.T) {
	if testing.Short() {
		t.Skip("makes network namespaces")
	}
	if err := netcluster.Available(); err != nil {
		t.Skipf("SKIPPED, NOT TESTED: %v", err)
	}
	dir := t.TempDir()
	prefix := "gts" + randomSuffix(t)
	script := func(args ...string) (string, error) {
		cmd := exec.Command(filepath.Join(e2erig.RepoRoot(), "deploy", "netns-cluster.sh"), args...)
		cmd.Env = append(os.Environ(), "GTRAIN_NETNS_PREFIX="+prefix, "GTRAIN_NETNS_DIR="+dir, "GTRAIN_BIN="+e2erig.BinDir, "HOME="+dir)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() {
		if out, err := script("down"); err != nil {
			t.Errorf("down: %v\n%s", err, out)
		}
		if out, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(out), prefix) {
			t.Errorf("namespaces left after down:\n%s", out)
		}
		if left := netcluster.Processes(dir); len(left) > 0 {
			t.Errorf("processes left after down: %v", left)
		}
	})
	if out, err := script("up"); err != nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
	out, err := script("gctl", "node", "list", "-o", "json")
	var nodes []api.NodeRow
	if err != nil || json.Unmarshal([]byte(out), &nodes) != nil || len(nodes) != 3 {
		t.Fatalf("node list: %v\n%s", err, out)
	}
	for _, n := range nodes {
		if n.State != api.NodeReady || !strings.HasPrefix(n.Addr, "10.88.0.") {
			t.Errorf("node %+v: want ready at a 10.88.0.x address", n)
		}
	}
	if out, err := script("up"); err == nil || !strings.Contains(out, "up already") {
		t.Errorf("a second up: %v\n%s", err, out)
	}
}

// randomSuffix is 8 hex digits: concurrent runs never share namespaces.
func randomSuffix(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
