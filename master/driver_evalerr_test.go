package master

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/master/core"
)

// flakyEvaluator fails its first fails calls with err, then succeeds.
type flakyEvaluator struct {
	mu    sync.Mutex
	fails int
	err   error
}

func (e *flakyEvaluator) EndPass(ctx context.Context, pass int, step int64) (api.Metrics, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.fails > 0 {
		e.fails--
		return api.Metrics{}, e.err
	}
	return api.Metrics{}, nil
}

// The driver turns the evaluator's errors into the core's: a model write
// that fails warns while it is retried and the pass then ends; a diverged
// model fails the job at once, without a retry.
func TestDriverPassEndErrors(t *testing.T) {
	write := &ModelWriteError{Pass: 0, Dir: "/m", Err: syscall.ENOSPC}
	diverged := &DivergedError{What: "parameter w holds nan"}
	cases := []struct {
		name       string
		eval       *flakyEvaluator
		warned     string
		wantFailed string
		wantPass   int
	}{
		{"a model write fails twice", &flakyEvaluator{fails: 2, err: write}, write.Warning(), "", 1},
		{"the parameters diverged", &flakyEvaluator{fails: 1, err: diverged}, "",
			"diverged at pass 0 step 4 (parameter w holds nan): lower the learning rate", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := core.FixtureSyncConfig(3, 4, 2)
			cfg.LongPoll = 5 * time.Millisecond
			store := &MemStore{}
			d := mustDriver(t, t.Context(), cfg, core.FixtureTaskSet(), store, tc.eval, newFakeClock())
			runSyncSteps(t, d, 0, 4)
			var warned string
			deadline := time.After(10 * time.Second)
			for d.Failed() == "" && metaOf(d).Pass == 0 {
				if w := d.Warning(); w != "" {
					warned = w
				}
				select {
				case <-deadline:
					t.Fatalf("the pass end neither ended nor failed: meta %+v", metaOf(d))
				case <-time.After(time.Millisecond):
				}
			}
			if warned != tc.warned || d.Failed() != tc.wantFailed || metaOf(d).Pass != tc.wantPass {
				t.Fatalf("warned %q, failed %q, pass %d; want %q, %q, %d", warned, d.Failed(), metaOf(d).Pass, tc.warned, tc.wantFailed, tc.wantPass)
			}
			if d.Warning() != "" {
				t.Fatalf("the warning outlived the pass end: %q", d.Warning())
			}
		})
	}
}

// The warning names the directory and the cause, not the temporary file
// the write failed on, and says what to do.
func TestModelWriteErrorWarning(t *testing.T) {
	err := &ModelWriteError{Pass: 3, Dir: "/ck/model/j",
		Err: fmt.Errorf("model: write /ck/model/j/pass-00003: %w", &fs.PathError{Op: "write", Path: "/ck/model/j/.pass-00003.tmp-1/w.bin", Err: syscall.ENOSPC})}
	w := err.Warning()
	for _, want := range []string{"model of pass 3 to /ck/model/j: no space left on device", "training waits", "free space"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning %q does not say %q", w, want)
		}
	}
	if strings.Contains(w, ".tmp-") || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("warning %q names the temporary file, or the error hides its cause", w)
	}
}
