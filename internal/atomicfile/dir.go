package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// fsyncDir is the fsync of an open directory; tests replace it to see the
// calls and to inject failures.
var fsyncDir = (*os.File).Sync

// SyncDir makes creates, renames and removals inside dir durable. Failures
// wrap ErrNotDurable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir %s for fsync: %w: %w", dir, ErrNotDurable, err)
	}
	defer d.Close()
	if err := fsyncDir(d); err != nil && !unsupported(err) {
		return fmt.Errorf("fsync dir %s: %w: %w", dir, ErrNotDurable, err)
	}
	return nil
}

// unsupported reports whether a directory fsync failed because the
// filesystem cannot do it at all, rather than because it failed to.
func unsupported(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP)
}

// ReplaceDir renames the complete directory src to dst and fsyncs dst's
// parent. A directory cannot be renamed over a non-empty one, so an existing
// dst is first moved aside and removed once src is in place; should that
// second rename fail, the old dst is put back.
func ReplaceDir(src, dst string) error {
	err := os.Rename(src, dst)
	if err == nil {
		return SyncDir(filepath.Dir(dst))
	}
	if _, statErr := os.Lstat(dst); statErr != nil {
		return fmt.Errorf("rename %s to %s: %w", src, dst, err)
	}
	aside, err := os.MkdirTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".old-")
	if err != nil {
		return fmt.Errorf("make room for %s: %w", dst, err)
	}
	old := filepath.Join(aside, filepath.Base(dst))
	if err := os.Rename(dst, old); err != nil {
		_ = os.Remove(aside)
		return fmt.Errorf("move old %s aside: %w", dst, err)
	}
	if err := os.Rename(src, dst); err != nil {
		_ = os.Rename(old, dst)
		_ = os.RemoveAll(aside)
		return fmt.Errorf("rename %s to %s: %w", src, dst, err)
	}
	if err := os.RemoveAll(aside); err != nil {
		return fmt.Errorf("remove old %s: %w", old, err)
	}
	return SyncDir(filepath.Dir(dst))
}

// Symlink points path at target, replacing an existing symlink atomically:
// a symlink made under a fresh temporary name is renamed over it. The
// directory is fsynced afterwards.
func Symlink(target, path string) error {
	const attempts = 8 // another writer may grab the freed temp name in between
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	for range attempts {
		tmp, err := freeTempName(dir, TempPattern(name))
		if err != nil {
			return err
		}
		if err := os.Symlink(target, tmp); err != nil {
			if errors.Is(err, os.ErrExist) {
				continue
			}
			return fmt.Errorf("symlink %s -> %s: %w", tmp, target, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			_ = os.Remove(tmp)
			return fmt.Errorf("rename %s to %s: %w", tmp, path, err)
		}
		return SyncDir(dir)
	}
	return fmt.Errorf("symlink %s -> %s: no free temporary name after %d attempts: %w", path, target, attempts, os.ErrExist)
}

// freeTempName returns an unused path in dir by creating and removing a
// temp file of that name.
func freeTempName(dir, pattern string) (string, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", fmt.Errorf("create temp name in %s: %w", dir, err)
	}
	name := f.Name()
	_ = f.Close()
	if err := os.Remove(name); err != nil {
		return "", fmt.Errorf("free temp name %s: %w", name, err)
	}
	return name, nil
}
