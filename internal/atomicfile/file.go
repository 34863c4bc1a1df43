package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ErrNotDurable means the new entry is in place but its directory could not
// be fsynced, so a crash may still lose it. Callers that must not leave an
// entry they cannot vouch for remove it on this error.
var ErrNotDurable = errors.New("in place but the directory was not fsynced")

// TempPattern is the os.CreateTemp pattern of a temporary name for name.
func TempPattern(name string) string { return "." + name + ".tmp-*" }

// Pending is a file being written under a temporary name beside its final
// path. Write to it, then Commit; defer Discard to clean up on every error.
type Pending struct {
	f      *os.File
	path   string
	closed bool // fsynced (or abandoned) and closed
	done   bool // renamed into place, or removed
}

// Create starts replacing path with a file of mode perm.
func Create(path string, perm os.FileMode) (*Pending, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, TempPattern(base))
	if err != nil {
		return nil, fmt.Errorf("create temp for %s: %w", path, err)
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("chmod %s: %w", f.Name(), err)
	}
	return &Pending{f: f, path: path}, nil
}

// Write appends to the temporary file.
func (p *Pending) Write(b []byte) (int, error) { return p.f.Write(b) }

// TempName is the path of the temporary file.
func (p *Pending) TempName() string { return p.f.Name() }

// Sync makes the content durable and closes the temporary file; after it
// only Commit, Abandon or Discard may be called.
func (p *Pending) Sync() error {
	if p.closed {
		return nil
	}
	if err := p.f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", p.f.Name(), err)
	}
	p.closed = true
	if err := p.f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", p.f.Name(), err)
	}
	return nil
}

// Commit syncs the content if Sync was not called, renames the temporary
// file to the final path and fsyncs the directory. An error wrapping
// ErrNotDurable means the rename happened but may not survive a crash.
func (p *Pending) Commit() error {
	if err := p.Sync(); err != nil {
		return err
	}
	if err := os.Rename(p.f.Name(), p.path); err != nil {
		return fmt.Errorf("rename %s to %s: %w", p.f.Name(), p.path, err)
	}
	p.done = true
	return SyncDir(filepath.Dir(p.path))
}

// Abandon closes the temporary file and leaves it where it is, as a crash
// at this point would. Its owner must remove such leftovers later.
func (p *Pending) Abandon() {
	if !p.closed {
		p.closed = true
		p.f.Close()
	}
	p.done = true
}

// Discard closes and removes the temporary file unless Commit or Abandon
// already settled it; it is safe to defer right after Create.
func (p *Pending) Discard() {
	if p.done {
		return
	}
	if !p.closed {
		p.closed = true
		p.f.Close()
	}
	os.Remove(p.f.Name())
	p.done = true
}

// WriteFunc replaces path with a file of mode perm holding what write
// writes. On any error path is left as it was and no temporary file remains;
// write's own error is returned unwrapped.
func WriteFunc(path string, perm os.FileMode, write func(w io.Writer) error) error {
	p, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer p.Discard()
	if err := write(p); err != nil {
		return err
	}
	return p.Commit()
}

// WriteFile is os.WriteFile made atomic and durable.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return WriteFunc(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
