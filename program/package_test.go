package program

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gtrain/gtrain/internal/sandbox"
)

func TestPackUnpackRoundTrip(t *testing.T) {
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"run.sh": "#!/bin/sh\necho hi\n", "lib/util.py": "x = 1\n"}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data, err := Pack(src)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Pack(src)
	if !bytes.Equal(data, again) {
		t.Error("packing the same tree twice gives different bytes")
	}
	dst := t.TempDir()
	if err := Unpack(data, PackageSHA256(data), dst); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		got, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || string(got) != body {
			t.Errorf("%s: %q %v", name, got, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(dst, "run.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("run.sh lost its executable bit: %v %v", fi.Mode(), err)
	}
	if err := Unpack(data, PackageSHA256([]byte("other")), t.TempDir()); !errors.Is(err, ErrPackage) {
		t.Errorf("a wrong sha256: %v", err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := Pack(src); !errors.Is(err, ErrPackage) {
		t.Errorf("a symlink in the tree: %v", err)
	}
}

func TestUnpackRefusesHostileEntries(t *testing.T) {
	for _, h := range []tar.Header{
		{Name: "../evil", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644},
		{Name: "/etc/evil", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644},
		{Name: "a/../../evil", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644},
		{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc"},
		{Name: "big", Typeflag: tar.TypeReg, Size: maxPackageUnpacked + 1, Mode: 0o644},
	} {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		_ = tw.WriteHeader(&h)
		if h.Typeflag == tar.TypeReg && h.Size == 1 {
			_, _ = tw.Write([]byte("x"))
		}
		tw.Close()
		zw.Close()
		root := t.TempDir()
		dst := filepath.Join(root, "ws")
		os.Mkdir(dst, 0o700)
		if err := Unpack(buf.Bytes(), PackageSHA256(buf.Bytes()), dst); !errors.Is(err, ErrPackage) {
			t.Errorf("%s: got %v, want ErrPackage", h.Name, err)
		}
		if _, err := os.Lstat(filepath.Join(root, "evil")); err == nil {
			t.Errorf("%s: a file was written outside the workspace", h.Name)
		}
	}
}

// TestStartForJobFromPackage: a job whose workspace was uploaded runs its
// program from the unpacked package, which Close removes.
func TestStartForJobFromPackage(t *testing.T) {
	data, err := Pack(repoDir(t, "program/testdata"))
	if err != nil {
		t.Fatal(err)
	}
	spec := programSpec(t, "ok")
	spec.Model.Workspace, spec.Model.Package = "", PackageSHA256(data)
	fetch := func(context.Context) ([]byte, error) { return data, nil }
	if err := DeclareForSubmit(context.Background(), spec, fetch, sandbox.Policy{}, nil); err != nil {
		t.Fatal(err)
	}
	c, _, err := StartForJob(context.Background(), spec, 0, fetch, sandbox.Policy{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := c.cmd.Dir
	if _, err := os.Stat(filepath.Join(dir, "bad.py")); err != nil {
		t.Fatalf("the program's workspace: %v", err)
	}
	c.Close()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the unpacked workspace %s outlived Close: %v", dir, err)
	}
	spec.Model.Package = PackageSHA256([]byte("tampered"))
	if _, _, err := StartForJob(context.Background(), spec, 0, fetch, sandbox.Policy{}, nil); !errors.Is(err, ErrPackage) {
		t.Errorf("a package whose sum differs: %v", err)
	}
}
