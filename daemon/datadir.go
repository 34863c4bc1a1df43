package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gtrain/gtrain/internal/atomicfile"
	"github.com/gtrain/gtrain/internal/rolecfg"
)

// An agent owns its data dir: two agents on one dir would start two
// embedded etcds on one WAL (the second used to hang in etcd's own file
// lock, deaf to SIGTERM) and supervise the same roles twice. It says so at
// once instead, and checks that the dir's filesystem has room for what it
// writes before etcd panics on a full disk.

// ErrDataDirInUse: another live agent holds the data dir's lock.
var ErrDataDirInUse = errors.New("data dir in use")

// ErrDataDirFull: the data dir's filesystem has too little free space.
var ErrDataDirFull = errors.New("not enough free space")

// dataDirLock is the lock file an agent holds (flock) for its life.
const dataDirLock = "agent.lock"

// Free space an agent needs in its data dir at start: room for logs,
// models and checkpoints, plus, with --dev, the 64 MiB write-ahead log the
// embedded etcd preallocates (unless it exists already).
const (
	minFreeBase = 16 << 20
	etcdWALSize = 64 << 20
)

// lockDataDir takes the data dir's lock without waiting and writes who
// holds it into the lock file; the returned func releases it. The kernel
// releases it too when the agent dies, however it dies.
func lockDataDir(cfg Config) (unlock func(), err error) {
	path := filepath.Join(cfg.DataDir, dataDirLock)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data dir (--data-dir) %s: lock: %w", cfg.DataDir, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		_ = f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is held by another gtraind agent (%s): stop that agent first, or give this one its own --data-dir",
				ErrDataDirInUse, cfg.DataDir, describeHolder(holder))
		}
		return nil, fmt.Errorf("data dir (--data-dir) %s: lock %s: %w", cfg.DataDir, path, err)
	}
	who := fmt.Sprintf("pid %d, node %s, api %s", os.Getpid(), cfg.NodeName, cfg.APIAddr)
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(who+"\n"), 0) // only for the message above
	}
	return func() { _ = f.Close() }, nil
}

func describeHolder(b []byte) string {
	if s := strings.TrimSpace(string(b)); s != "" {
		return s
	}
	return "pid unknown"
}

// checkFreeSpace refuses a data dir whose filesystem lacks the room the
// agent needs, naming what it has, what it needs and why.
func checkFreeSpace(cfg Config) error {
	var fs unix.Statfs_t
	if err := unix.Statfs(cfg.DataDir, &fs); err != nil {
		return fmt.Errorf("data dir (--data-dir) %s: free space: %w", cfg.DataDir, err)
	}
	free := int64(fs.Bavail) * int64(fs.Bsize)
	need, why := int64(minFreeBase), "job logs, models and checkpoints"
	if cfg.Dev && !walExists(cfg.DataDir) {
		need += etcdWALSize
		why += ", and the 64 MiB write-ahead log the embedded etcd of --dev preallocates"
	}
	if free >= need {
		return nil
	}
	return fmt.Errorf("%w: data dir (--data-dir) %s has %d MiB free; the agent needs at least %d MiB there (%s): free space or choose another --data-dir",
		ErrDataDirFull, cfg.DataDir, free>>20, need>>20, why)
}

// walExists reports whether the embedded etcd's write-ahead log was
// created by an earlier run (its space is taken already).
func walExists(dataDir string) bool {
	files, _ := filepath.Glob(filepath.Join(dataDir, "etcd", "member", "wal", "*.wal"))
	return len(files) > 0
}

// writeEtcdPassword puts the etcd password, if any, where the roles read it
// (rolecfg.EtcdPasswordPath, 0600 in the data dir): a file keeps it out of
// their environment and command line, and the data dir is covered in every
// model program's view. Without a password a stale file is removed.
func writeEtcdPassword(cfg Config) error {
	path := rolecfg.EtcdPasswordPath(cfg.DataDir)
	if cfg.EtcdPassword == "" {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove the old etcd password file: %w", err)
		}
		return nil
	}
	if err := atomicfile.WriteFile(path, []byte(cfg.EtcdPassword), 0o600); err != nil {
		return fmt.Errorf("write the etcd password for the roles: %w", err)
	}
	return nil
}
