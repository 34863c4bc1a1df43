package daemon

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/internal/rolecfg"
)

// A second lock of a data dir fails at once and names the holder; the
// dir is free again once the holder lets go.
func TestLockDataDir(t *testing.T) {
	cfg := Config{DataDir: t.TempDir(), NodeName: "n1", APIAddr: "127.0.0.1:7164"}
	unlock, err := lockDataDir(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockDataDir(cfg)
	holder := fmt.Sprintf("pid %d, node n1, api 127.0.0.1:7164", os.Getpid())
	if !errors.Is(err, ErrDataDirInUse) || !strings.Contains(err.Error(), holder) || !strings.Contains(err.Error(), cfg.DataDir) {
		t.Fatalf("second lock: %v; want ErrDataDirInUse naming %s and %q", err, cfg.DataDir, holder)
	}
	unlock()
	unlock, err = lockDataDir(cfg)
	if err != nil {
		t.Fatalf("lock after the holder let go: %v", err)
	}
	unlock()
}

// The agent keeps the etcd password for its roles in a 0600 file of its
// data dir, and removes it when it runs without one.
func TestWriteEtcdPassword(t *testing.T) {
	cfg := Config{DataDir: t.TempDir(), EtcdPassword: "s3cret"}
	path := rolecfg.EtcdPasswordPath(cfg.DataDir)
	if err := writeEtcdPassword(cfg); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("password file: %v, %v; want mode 0600", fi, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "s3cret" {
		t.Errorf("password file holds %q", b)
	}
	cfg.EtcdPassword = ""
	if err := writeEtcdPassword(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("an agent without a password left the file: %v", err)
	}
}
