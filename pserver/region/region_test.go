package region

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// registryAt serves a registry taking regions of floats a half on a socket
// in a temporary directory.
func registryAt(t *testing.T, floats int) (*Registry, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pserver-0.regions.sock")
	lis, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	g := NewRegistry(func() int { return floats }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	go g.Serve(lis)
	t.Cleanup(g.Close)
	return g, path
}

// TestAttachSharesTheMemory: what the trainer writes in the gradient half
// the pserver reads, what the pserver writes in the parameter half the
// trainer reads; a region that replaces another drops it.
func TestAttachSharesTheMemory(t *testing.T) {
	g, path := registryAt(t, 100)
	r, f, err := Create(100)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := Attach(context.Background(), path, r, f, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	e, release, err := g.Use(r.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	r.Grads()[99] = 7
	e.Params()[0] = 3
	if e.Grads()[99] != 7 || r.Params()[0] != 3 {
		t.Fatalf("the pserver reads %v where the trainer wrote 7, the trainer %v where the pserver wrote 3", e.Grads()[99], r.Params()[0])
	}
	release()
	if _, _, err := g.Use(r.ID, 101); err == nil {
		t.Fatal("a region used for a shard of another size: no error")
	}
	r2, f2, err := Create(100)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	r3, f3, err := Create(100)
	if err != nil {
		t.Fatal(err)
	}
	defer r3.Close()
	for _, a := range []struct {
		r        *Region
		f        *os.File
		replaces uint64
	}{{r2, f2, 0}, {r3, f3, r2.ID}} {
		if err := Attach(context.Background(), path, a.r, a.f, a.replaces); err != nil {
			t.Fatal(err)
		}
		a.f.Close()
	}
	if _, _, err := g.Use(r2.ID, 100); err == nil || g.Len() != 1 {
		t.Fatalf("region r2 after r3 replaced it: %v, %d regions; want it gone, r3 alone", err, g.Len())
	}
}

// TestAttachRefusesWhatCouldCrashThePserver: a file that may still shrink
// (a pserver touching its mapping past the new end dies of SIGBUS), or of
// another size than the shard's, is refused with the reason, and nothing
// is kept.
func TestAttachRefusesWhatCouldCrashThePserver(t *testing.T) {
	g, path := registryAt(t, 100)
	fd, err := unix.MemfdCreate("unsealed", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "unsealed")
	defer f.Close()
	if err := f.Truncate(int64(bytes(100))); err != nil {
		t.Fatal(err)
	}
	r := &Region{ID: 1, Floats: 100}
	if err := Attach(context.Background(), path, r, f, 0); err == nil || !strings.Contains(err.Error(), "not sealed") {
		t.Fatalf("an unsealed file: %v; want refused as not sealed", err)
	}
	other, f2, err := Create(50)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	defer f2.Close()
	if err := Attach(context.Background(), path, other, f2, 0); err == nil || !strings.Contains(err.Error(), "this shard holds 100") {
		t.Fatalf("a region of 50 floats for a shard of 100: %v; want refused with both sizes", err)
	}
	if g.Len() != 0 {
		t.Fatalf("%d regions kept after refusals", g.Len())
	}
}
