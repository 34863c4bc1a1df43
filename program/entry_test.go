package program

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestResolveEntry(t *testing.T) {
	root := t.TempDir()
	ws, outside := filepath.Join(root, "ws"), filepath.Join(root, "outside")
	for _, d := range []string{ws, filepath.Join(ws, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string, mode os.FileMode) {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(ws, "model.py"), 0o644)
	write(filepath.Join(ws, "run.sh"), 0o755)
	write(filepath.Join(outside, "evil.py"), 0o755)
	if err := os.Symlink(filepath.Join(outside, "evil.py"), filepath.Join(ws, "link.py")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "sub", "out")); err != nil {
		t.Fatal(err)
	}
	ok := [][]string{
		{"/usr/bin/python3", "model.py"},
		{"./run.sh", "--epochs=3"},
		{"run.sh"},
		{"sh", "run.sh"}, // a command on PATH
		{"/usr/bin/python3", "model.py", "--out", "sub/new-file"},
	}
	for _, argv := range ok {
		if _, _, err := ResolveEntry(ws, argv); err != nil {
			t.Errorf("%v: %v", argv, err)
		}
	}
	bad := [][]string{
		{"/usr/bin/python3", "../outside/evil.py"},
		{"/usr/bin/python3", "link.py"},
		{"link.py"},
		{"/usr/bin/python3", filepath.Join(outside, "evil.py")},
		{"/usr/bin/python3", "sub/out/evil.py"},
		{"/usr/bin/python3", "--script=../x.py"},
		{"model.py"}, // not executable
		{"no-such-command-gtrain"},
		{},
	}
	for _, argv := range bad {
		if _, _, err := ResolveEntry(ws, argv); !errors.Is(err, ErrEntry) {
			t.Errorf("%v: got %v, want ErrEntry", argv, err)
		}
	}
	if _, _, err := ResolveEntry(filepath.Join(ws, "model.py"), []string{"run.sh"}); !errors.Is(err, ErrEntry) {
		t.Errorf("a file as workspace: got %v", err)
	}
}
