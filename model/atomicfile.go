package model

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// writeFileDurably writes data to dir/name through a temporary name that is
// fsynced before being renamed, so dir/name is either absent or complete.
func writeFileDurably(dir, name string, data []byte) (err error) {
	path := filepath.Join(dir, name)
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temp for %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("chmod %s: %w", tmp, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", tmp, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s to %s: %w", tmp, path, err)
	}
	return nil
}

// syncDir makes renames inside dir durable. Filesystems that cannot fsync a
// directory (EINVAL, ENOTSUP) are tolerated: there is nothing more to do there.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir %s for fsync: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
		return fmt.Errorf("fsync dir %s: %w", dir, err)
	}
	return nil
}

// replaceDir renames the complete directory src to dst. A directory cannot be
// renamed over a non-empty one, so an existing dst (the same pass written
// again, e.g. after a restart) is first moved aside and removed afterwards.
func replaceDir(src, dst string) error {
	err := os.Rename(src, dst)
	if err == nil {
		return nil
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
	return nil
}

// replaceSymlink points dir/name at target atomically: a symlink made under a
// fresh temporary name is renamed over the old one.
func replaceSymlink(dir, name, target string) error {
	const attempts = 8 // another writer may grab the freed temp name in between
	path := filepath.Join(dir, name)
	for range attempts {
		tmp, err := freeTempName(dir, "."+name+".tmp-*")
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
		return nil
	}
	return fmt.Errorf("symlink %s -> %s: no free temporary name after %d attempts: %w", path, target, attempts, os.ErrExist)
}

// freeTempName returns a unique unused path in dir by creating and removing a temp file.
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
