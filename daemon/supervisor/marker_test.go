package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/confine"
)

// Agents that share the directory verify it; one whose peer never shows a
// marker, or whose earlier verified node left none, does not.
func TestVerifyStorage(t *testing.T) {
	dir, file := t.TempDir(), ""
	c := schema.StorageCheck{Token: "t1", Dir: dir, Nodes: []string{"n1", "n2"}}
	errs := make(chan error, 2)
	for _, n := range c.Nodes {
		roots := rootsOf(t, dir, file)
		go func() { errs <- verifyStorage(context.Background(), roots, c, "job", 7, n, 5*time.Second) }()
	}
	for range c.Nodes {
		if err := <-errs; err != nil {
			t.Errorf("shared directory: %v", err)
		}
	}
	// n3 joins later and must also see the marker n1 left (n1 is down now).
	late := schema.StorageCheck{Token: "t2", Dir: dir, Nodes: []string{"n3"}, Refs: []string{"n1"}}
	if err := verifyStorage(context.Background(), rootsOf(t, dir, file), late, "job", 7, "n3", time.Second); err != nil {
		t.Errorf("marker of a verified node: %v", err)
	}
	// Another job, or the same name submitted again, has other markers.
	other := schema.StorageCheck{Token: "t3", Dir: dir, Nodes: []string{"n3"}, Refs: []string{"n1"}}
	err := verifyStorage(context.Background(), rootsOf(t, dir, file), other, "job", 8, "n3", 200*time.Millisecond)
	if !errors.Is(err, ErrNotShared) || !strings.Contains(err.Error(), "n1 (which ran the job) left: no such file") {
		t.Errorf("marker of another incarnation of the job: %v, want ErrNotShared naming n1", err)
	}
	alone := schema.StorageCheck{Token: "t4", Dir: dir, Nodes: []string{"n1", "n2"}}
	err = verifyStorage(context.Background(), rootsOf(t, dir, file), alone, "job", 7, "n1", 300*time.Millisecond)
	want := fmt.Sprintf("cannot see the marker %s of node n2: it was written for another check", markerPath(dir, "job", 7, "n2"))
	if !errors.Is(err, ErrNotShared) || !strings.Contains(err.Error(), want) {
		t.Errorf("peer that never wrote: %v, want %q", err, want)
	}
	file = filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := schema.StorageCheck{Token: "t5", Dir: filepath.Join(file, "ckpt"), Nodes: []string{"n1"}}
	if err := verifyStorage(context.Background(), rootsOf(t, dir, file), bad, "job", 7, "n1", time.Second); err == nil || !strings.Contains(err.Error(), "cannot create") {
		t.Errorf("directory that cannot exist: %v", err)
	}
}

// rootsOf is the roots of dirs and of the directory of file (when set).
func rootsOf(t *testing.T, dir, file string) confine.Roots {
	t.Helper()
	if file != "" {
		file = filepath.Dir(file)
	}
	r, err := confine.NewRoots(dir, file)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
