package daemon

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gtrain/gtrain/daemon/supervisor"
	"github.com/gtrain/gtrain/jobspec"
)

// childEnv marks a re-executed test binary as a stand-in for a gtraind
// role. The tests point Config.Exe at the test binary, so the supervisor is
// tested with real processes but without the real roles. What the child
// does is chosen by the first word of its job name:
//
//	ok-*       prints and exits 0
//	crash-*    prints and exits 3
//	sleep-*    prints a tick every 50ms until SIGTERM, then exits 0
//	stubborn-* ignores SIGTERM and sleeps (only SIGKILL ends it)
//	mixed-*    trainers crash, the other workers sleep
//	lost-*     trainers exit supervisor.ExitLostContact on their first 4 starts (counted
//	           in a file in the working directory), then sleep; the other
//	           workers sleep
//	slog-*     like sleep-*, but logs through slog as the roles do
const childEnv = "GTRAIN_DAEMON_TEST_CHILD"

func TestMain(m *testing.M) {
	if cfg := os.Getenv(agentEnv); cfg != "" {
		os.Exit(testAgentProcess(cfg))
	}
	if os.Getenv(childEnv) != "" {
		os.Exit(testChild(os.Args[1:]))
	}
	// Every child the agents under test start inherits this.
	os.Setenv(childEnv, "1")
	os.Exit(m.Run())
}

func testChild(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "test child: no role")
		return 2
	}
	role, job, index := args[0], "", "-"
	for i := 1; i+1 < len(args); i++ {
		switch args[i] {
		case "--job":
			job = args[i+1]
		case "--index":
			index = args[i+1]
		}
	}
	behaviour, _, _ := strings.Cut(job, "-")
	switch {
	case behaviour == "mixed" && role == jobspec.RoleTrainer:
		behaviour = "crash"
	case behaviour == "lost" && role == jobspec.RoleTrainer && startsOf(job+"-"+index) <= 4:
		fmt.Fprintln(os.Stderr, "lost etcd, on purpose")
		return supervisor.ExitLostContact
	case behaviour == "mixed" || behaviour == "lost":
		behaviour = "sleep"
	}
	fmt.Printf("%s %s of %s: %s (pid %d)\n", role, index, job, behaviour, os.Getpid())
	switch behaviour {
	case "ok":
		fmt.Println("working")
		fmt.Println("done")
		return 0
	case "crash":
		fmt.Fprintln(os.Stderr, "gtraind: crashing on purpose") // as gtraind prints the error it exits with
		return 3
	case "sleep":
		return tickUntilTerm(func(n int) { fmt.Printf("tick %d\n", n) }, func() { fmt.Println("got SIGTERM; bye") })
	case "slog":
		return slogTicks(role, index)
	case "stubborn":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ignoring SIGTERM")
		time.Sleep(time.Hour)
		return 0
	}
	fmt.Fprintf(os.Stderr, "test child: unknown behaviour %q\n", behaviour)
	return 2
}

// slogTicks logs like a role (cmd/gtraind's text handler, a time on every
// line), so that Logs merges the lines of several workers by time.
func slogTicks(role, index string) int {
	log := slog.New(slog.NewTextHandler(os.Stdout, nil)).With("role", role, "index", index)
	return tickUntilTerm(func(n int) { log.Info("tick", "n", n) }, func() { log.Info("got SIGTERM; bye") })
}

// tickUntilTerm calls tick every 50ms until SIGTERM, then bye.
func tickUntilTerm(tick func(n int), bye func()) int {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	t := time.NewTicker(50 * time.Millisecond)
	for n := 1; ; n++ {
		select {
		case <-term:
			bye()
			return 0
		case <-t.C:
			tick(n)
		}
	}
}

// startsOf counts the starts of a test child in a file named name in the
// working directory (the agent's data dir).
func startsOf(name string) int {
	b, _ := os.ReadFile(name)
	n := len(b) + 1
	_ = os.WriteFile(name, append(b, '.'), 0o600)
	return n
}
