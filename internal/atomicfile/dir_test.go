package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

func TestSyncDirToleratesOnlyUnsupportedFsync(t *testing.T) {
	for _, tc := range []struct {
		fsyncErr error
		wantErr  bool
	}{
		{nil, false},
		{syscall.EINVAL, false},
		{syscall.ENOTSUP, false},
		{&os.PathError{Op: "sync", Path: "d", Err: syscall.EINVAL}, false},
		{syscall.EIO, true},
		{syscall.ENOSPC, true},
	} {
		recordDirSyncs(t, tc.fsyncErr)
		err := SyncDir(t.TempDir())
		if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, ErrNotDurable)) {
			t.Errorf("fsync error %v: SyncDir = %v, want error %v wrapping ErrNotDurable", tc.fsyncErr, err, tc.wantErr)
		}
	}
}

// mkdirWith makes dir holding one file of that content.
func mkdirWith(t *testing.T, dir, content string) {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReplaceDir(t *testing.T) {
	for _, existing := range []bool{false, true} {
		synced := recordDirSyncs(t, nil)
		parent := t.TempDir()
		src, dst := filepath.Join(parent, ".new"), filepath.Join(parent, "pass")
		mkdirWith(t, src, "new")
		if existing {
			mkdirWith(t, dst, "old")
		}
		if err := ReplaceDir(src, dst); err != nil {
			t.Fatalf("existing %v: %v", existing, err)
		}
		if got, err := os.ReadFile(filepath.Join(dst, "file")); err != nil || string(got) != "new" {
			t.Fatalf("existing %v: dst holds %q, %v; want new", existing, got, err)
		}
		if got := names(t, parent); !slices.Equal(got, []string{"pass"}) {
			t.Fatalf("existing %v: entries = %v, want only pass", existing, got)
		}
		if !slices.Equal(*synced, []string{parent}) {
			t.Fatalf("existing %v: directory fsyncs = %v, want [%s]", existing, *synced, parent)
		}
	}
}

func TestReplaceDirWithoutSourceKeepsDestination(t *testing.T) {
	parent := t.TempDir()
	dst := filepath.Join(parent, "pass")
	mkdirWith(t, dst, "old")
	if err := ReplaceDir(filepath.Join(parent, "missing"), dst); err == nil {
		t.Fatal("replacing with a missing source succeeded")
	}
	if got, err := os.ReadFile(filepath.Join(dst, "file")); err != nil || string(got) != "old" {
		t.Fatalf("dst holds %q, %v; want the old content", got, err)
	}
	if got := names(t, parent); !slices.Equal(got, []string{"pass"}) {
		t.Fatalf("entries = %v, want only pass", got)
	}
}

func TestSymlinkReplacesAndSyncs(t *testing.T) {
	synced := recordDirSyncs(t, nil)
	dir := t.TempDir()
	link := filepath.Join(dir, "latest")
	for _, target := range []string{"pass-00000", "pass-00001"} {
		if err := Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if got, err := os.Readlink(link); err != nil || got != target {
			t.Fatalf("latest -> %q, %v; want %q", got, err, target)
		}
	}
	if got := names(t, dir); !slices.Equal(got, []string{"latest"}) {
		t.Fatalf("entries = %v, want only latest", got)
	}
	if !slices.Equal(*synced, []string{dir, dir}) {
		t.Fatalf("directory fsyncs = %v, want %s twice", *synced, dir)
	}
}
