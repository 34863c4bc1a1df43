package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// names lists dir's entries, sorted.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	slices.Sort(out)
	return out
}

// recordDirSyncs makes every directory fsync append the directory's path to
// the returned slice and fail with err.
func recordDirSyncs(t *testing.T, err error) *[]string {
	t.Helper()
	var synced []string
	orig := fsyncDir
	fsyncDir = func(d *os.File) error {
		synced = append(synced, filepath.Clean(d.Name()))
		return err
	}
	t.Cleanup(func() { fsyncDir = orig })
	return &synced
}

func TestWriteFileAppearsWholeWithModeAndSyncsItsDirectory(t *testing.T) {
	synced := recordDirSyncs(t, nil)
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	for _, content := range []string{"first", "second, longer than the first"} {
		if err := WriteFile(path, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("content = %q, %v; want %q", got, err, content)
		}
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode = %v, %v; want 0640", fi.Mode(), err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"f"}) {
		t.Fatalf("entries = %v, want only f", got)
	}
	if want := []string{dir, dir}; !slices.Equal(*synced, want) {
		t.Fatalf("directory fsyncs = %v, want %v", *synced, want)
	}
}

// A failed write leaves the previous content (or nothing) and no temp file.
func TestWriteFuncFailureLeavesPathAsItWas(t *testing.T) {
	errWrite := errors.New("disk on fire")
	halfThenFail := func(w io.Writer) error {
		io.WriteString(w, "half")
		return errWrite
	}
	for _, tc := range []struct {
		name string
		old  string // "" for no previous file
	}{
		{"new file", ""},
		{"existing file", "old"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f")
			want := []string{}
			if tc.old != "" {
				if err := os.WriteFile(path, []byte(tc.old), 0o644); err != nil {
					t.Fatal(err)
				}
				want = []string{"f"}
			}
			if err := WriteFunc(path, 0o644, halfThenFail); !errors.Is(err, errWrite) {
				t.Fatalf("err = %v, want %v", err, errWrite)
			}
			if got := names(t, dir); !slices.Equal(got, want) {
				t.Fatalf("entries = %v, want %v", got, want)
			}
			if tc.old != "" {
				if got, _ := os.ReadFile(path); string(got) != tc.old {
					t.Fatalf("content = %q, want the old %q", got, tc.old)
				}
			}
		})
	}
}

func TestWriteFileRenameFailureRemovesTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d")
	// A non-empty directory cannot be renamed over.
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("data"), 0o644); err == nil {
		t.Fatal("renaming over a non-empty directory succeeded")
	}
	if got := names(t, dir); !slices.Equal(got, []string{"d"}) {
		t.Fatalf("entries = %v, want only d", got)
	}
}

func TestCreateInMissingDirectoryFails(t *testing.T) {
	if _, err := Create(filepath.Join(t.TempDir(), "no", "f"), 0o644); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want ErrNotExist", err)
	}
}

func TestPendingEndings(t *testing.T) {
	for _, tc := range []struct {
		name     string
		end      func(*Pending) error
		wantTemp bool
		wantFile bool
	}{
		{"discard", func(p *Pending) error { p.Discard(); return nil }, false, false},
		{"sync then discard", func(p *Pending) error { p.Sync(); p.Discard(); return nil }, false, false},
		{"abandon as a crash", func(p *Pending) error { p.Abandon(); p.Discard(); return nil }, true, false},
		{"sync then abandon", func(p *Pending) error { p.Sync(); p.Abandon(); return nil }, true, false},
		{"commit then discard", func(p *Pending) error { err := p.Commit(); p.Discard(); return err }, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p, err := Create(filepath.Join(dir, "f"), 0o600)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(p, "content"); err != nil {
				t.Fatal(err)
			}
			if err := tc.end(p); err != nil {
				t.Fatal(err)
			}
			got := names(t, dir)
			hasTemp := slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, ".f.tmp-") })
			if hasTemp != tc.wantTemp || slices.Contains(got, "f") != tc.wantFile {
				t.Fatalf("entries = %v; want temp %v, final %v", got, tc.wantTemp, tc.wantFile)
			}
		})
	}
}

// A failed directory fsync leaves the new file in place and says so.
func TestCommitReportsUnsyncedDirectory(t *testing.T) {
	recordDirSyncs(t, syscall.EIO)
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	err := WriteFile(path, []byte("x"), 0o644)
	if !errors.Is(err, ErrNotDurable) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("err = %v, want ErrNotDurable wrapping EIO", err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"f"}) {
		t.Fatalf("entries = %v, want only f", got)
	}
}
