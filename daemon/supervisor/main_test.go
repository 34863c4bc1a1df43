package supervisor

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/internal/testing/logcheck"
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
