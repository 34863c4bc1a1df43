package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/internal/atomicfile"
	"github.com/gtrain/gtrain/internal/confine"
	"github.com/gtrain/gtrain/internal/fileperm"
)

// markerDir holds the storage markers inside a job's checkpoint.dir.
const markerDir = ".gtrain-storage"

// markerPoll is how often an agent looks for the other agents' markers.
const markerPoll = 100 * time.Millisecond

// markerPath is the marker node writes for job (whose record was created
// at fence) in dir: one file per node and job, so that two jobs sharing a
// directory, or a job name reused, never read each other's.
// markerWait is how long an agent waits for the other agents' markers; the
// scheduler gives a whole check longer (its checkTimeout).
const markerWait = 10 * time.Second

func markerPath(dir, job string, fence int64, node string) string {
	return filepath.Join(dir, markerDir, fmt.Sprintf("%s.%d.%s", job, fence, node))
}

// markerIdentity is what a marker says about who wrote it; markerContent
// adds the token of the check it was written for.
func markerIdentity(job string, fence int64, node string) string {
	return fmt.Sprintf("gtrain storage marker\njob: %s\nfence: %d\nnode: %s\n", job, fence, node)
}

func markerContent(job string, fence int64, node, token string) string {
	return markerIdentity(job, fence, node) + "token: " + token + "\n"
}

// ErrNotShared means a storage check found that checkpoint.dir is not one
// directory shared by the job's nodes.
var ErrNotShared = errors.New("checkpoint.dir is not shared")

// verifyStorage is node's part of check c of job: write this node's marker
// with the check's token and read it back, then wait (up to wait) until the
// markers of the other nodes of the check carry the token too, and read the
// markers that the nodes verified earlier (c.Refs) left. Every marker is
// reached beneath the job's roots: a checkpoint.dir swapped for a symlink
// out of them since submit is refused, not written to.
func verifyStorage(ctx context.Context, roots confine.Roots, c schema.StorageCheck, job string, fence int64, node string, wait time.Duration) error {
	own := markerPath(c.Dir, job, fence, node)
	content := markerContent(job, fence, node, c.Token)
	if err := roots.MkdirAll(filepath.Dir(own), fileperm.Dir); err != nil {
		return fmt.Errorf("cannot create %s: %w", filepath.Dir(own), err)
	}
	if err := atomicfile.WriteFile(own, []byte(content), fileperm.File); err != nil {
		return fmt.Errorf("cannot write marker %s: %w", own, err)
	}
	if got, err := roots.ReadFile(own); err != nil || string(got) != content {
		return fmt.Errorf("marker %s does not read back as written (%v)", own, err)
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for _, peer := range c.Nodes {
		if peer == node {
			continue
		}
		want := markerContent(job, fence, peer, c.Token)
		if err := awaitMarker(ctx, roots, markerPath(c.Dir, job, fence, peer), func(s string) bool { return s == want }); err != nil {
			return fmt.Errorf("%w: cannot see the marker %s of node %s: %v", ErrNotShared, markerPath(c.Dir, job, fence, peer), peer, err)
		}
	}
	for _, ref := range c.Refs {
		want := markerIdentity(job, fence, ref)
		if err := awaitMarker(ctx, roots, markerPath(c.Dir, job, fence, ref), func(s string) bool { return strings.HasPrefix(s, want) }); err != nil {
			return fmt.Errorf("%w: cannot see the marker %s that node %s (which ran the job) left: %v",
				ErrNotShared, markerPath(c.Dir, job, fence, ref), ref, err)
		}
	}
	return nil
}

// awaitMarker polls path until its content satisfies ok or ctx ends.
func awaitMarker(ctx context.Context, roots confine.Roots, path string, ok func(string) bool) error {
	tick := time.NewTicker(markerPoll)
	defer tick.Stop()
	for {
		b, err := roots.ReadFile(path)
		if err == nil && ok(string(b)) {
			return nil
		}
		select {
		case <-ctx.Done():
			switch {
			case errors.Is(err, fs.ErrNotExist):
				return errors.New("no such file")
			case err != nil:
				return err
			}
			return errors.New("it was written for another check")
		case <-tick.C:
		}
	}
}
