package supervisor

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/logcheck"
)

// childEnv marks a re-executed test binary as a stand-in for a role that
// runs until it is killed: the take-over test needs a process whose
// /proc/PID/cmdline is a role's command line.
const childEnv = "GTRAIN_SUPERVISOR_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		signal.Ignore(syscall.SIGTERM) // only SIGKILL ends it, as the take-over sends
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func testLog(t *testing.T) *slog.Logger { return logcheck.Logger(t, nil) }

// eventually waits up to timeout for cond, failing with what cond says.
func eventually(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, desc := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", timeout, desc)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
