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
	"time"

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
	g := NewRegistry(floats, slog.New(slog.NewTextHandler(io.Discard, nil)))
	go g.Serve(lis)
	t.Cleanup(g.Close)
	return g, path
}

// TestAttachSharesTheMemory: what the trainer writes in the gradient half
// the pserver reads, what the pserver writes in the parameter half the
// trainer reads; the pserver keeps the region while the attachment stays
// open, drops it once the trainer closes it, and the trainer sees the
// attachment end when the pserver drops it.
func TestAttachSharesTheMemory(t *testing.T) {
	g, path := registryAt(t, 100)
	r, a := attached(t, path, 100)
	e, release, err := g.Use(r.ID)
	if err != nil {
		t.Fatal(err)
	}
	r.Grads()[99] = 7
	e.Params()[0] = 3
	if e.Grads()[99] != 7 || r.Params()[0] != 3 {
		t.Fatalf("the pserver reads %v where the trainer wrote 7, the trainer %v where the pserver wrote 3", e.Grads()[99], r.Params()[0])
	}
	release()
	g.Drop() // as a pserver that restarted
	waitFor(t, "the trainer to see its region dropped", a.Lost)

	_, a2 := attached(t, path, 100)
	if g.Len() != 1 || a2.Lost() {
		t.Fatalf("%d regions after the second attach (lost %v); want it alone", g.Len(), a2.Lost())
	}
	a2.Close()
	waitFor(t, "the pserver to drop a region its trainer gave up", func() bool { return g.Len() == 0 })
	a.Close()
}

// attached creates a region of floats a half and attaches it at path; the
// test's end unmaps it.
func attached(t *testing.T, path string, floats int) (*Region, *Attachment) {
	t.Helper()
	r, f, err := Create(floats)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	defer f.Close()
	a, err := Attach(context.Background(), path, r, f)
	if err != nil {
		t.Fatal(err)
	}
	return r, a
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for range 500 {
		if ok() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("waited 5 s for %s", what)
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
	if _, err := Attach(context.Background(), path, r, f); err == nil || !strings.Contains(err.Error(), "not sealed") {
		t.Fatalf("an unsealed file: %v; want refused as not sealed", err)
	}
	other, f2, err := Create(50)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	defer f2.Close()
	if _, err := Attach(context.Background(), path, other, f2); err == nil || !strings.Contains(err.Error(), "this shard holds 100") {
		t.Fatalf("a region of 50 floats for a shard of 100: %v; want refused with both sizes", err)
	}
	if g.Len() != 0 {
		t.Fatalf("%d regions kept after refusals", g.Len())
	}
	g.Close() // the generation ends: an attach under way must not stay mapped
	late, f3, err := Create(100)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	defer f3.Close()
	if _, err := Attach(context.Background(), path, late, f3); err == nil || !strings.Contains(err.Error(), "stopping") {
		t.Fatalf("an attach after Close: %v; want refused", err)
	}
}
