package daemon

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
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
