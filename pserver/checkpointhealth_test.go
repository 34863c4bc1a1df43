package pserver

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/gtrain/gtrain/internal/atomicfile"
)

// writeErr is a failed write as Store.Save reports it: the step and a temp
// file name that differ on every attempt around one root cause.
func writeErr(step int64, cause error) error {
	pe := &os.PathError{Op: "rename", Path: fmt.Sprintf("/ckpt/.x-step-%d.ckpt.tmp-%d", step, step*7), Err: cause}
	return fmt.Errorf("checkpoint: writing step %d: %w", step, pe)
}

func TestCkptHealthOneEventPerDistinctFailure(t *testing.T) {
	var h ckptHealth
	w, isNew := h.failed("pserver-1", "/ckpt", 300, writeErr(300, syscall.EISDIR))
	if !isNew || !strings.Contains(w, "pserver-1 cannot write checkpoint step 300 to /ckpt") || !strings.Contains(w, "to /ckpt: rename: is a directory; training goes on") {
		t.Fatalf("first failure: %q new=%v", w, isNew)
	}
	if _, isNew := h.failed("pserver-1", "/ckpt", 400, writeErr(400, syscall.EISDIR)); isNew {
		t.Error("the same cause at the next step counted as a new failure")
	}
	w, isNew = h.failed("pserver-1", "/ckpt", 500, writeErr(500, syscall.ENOSPC))
	if !isNew || !strings.Contains(w, "step 500") || !strings.Contains(w, "no space left") {
		t.Errorf("another cause: %q new=%v", w, isNew)
	}
	ev, ok := h.succeeded("pserver-1", 600)
	if !ok || ev != "pserver-1 writes checkpoints again (step 600); the failure was: rename: no space left on device" {
		t.Errorf("recovery: %q %v", ev, ok)
	}
	if _, ok := h.succeeded("pserver-1", 700); ok {
		t.Error("a second success announced a recovery again")
	}
	if _, isNew := h.failed("pserver-1", "/ckpt", 800, writeErr(800, syscall.ENOSPC)); !isNew {
		t.Error("a failure after recovering is not new")
	}
}

func TestRootCauseFollowsJoinedErrors(t *testing.T) {
	err := fmt.Errorf("checkpoint: %w", fmt.Errorf("fsync dir /ckpt: %w: %w", atomicfile.ErrNotDurable, syscall.EIO))
	if got := rootCause(err); !errors.Is(got, syscall.EIO) {
		t.Errorf("root cause %v, want EIO", got)
	}
}
