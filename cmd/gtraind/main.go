// Command gtraind is gtrain's node daemon (`gtraind agent`) and the role
// processes the agent launches (`gtraind master|pserver|trainer`).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/daemon"
	"github.com/gtrain/gtrain/daemon/supervisor"
	"github.com/gtrain/gtrain/internal/roleruntime"
	"github.com/gtrain/gtrain/internal/sandbox"
)

func main() {
	// The sandbox's helper (hidden): it enters a program's sandbox and
	// execs it, before anything else of gtraind starts.
	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperArg {
		sandbox.HelperMain(os.Args[2:])
	}
	// On a CPU its OpenBLAS does not know, the agent comes back on the
	// kernels the CPU can run, and its roles inherit them.
	roleruntime.UseBetterKernels()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err := newRoot().ExecuteContext(ctx)
	os.Exit(exitCode(err))
}

// errUsage marks a rejected command line (exit 2).
var errUsage = errors.New("usage")

// exitCode is 0 on success; 2 for a rejected setting: a bad command line,
// a --node-name that a live agent holds, or a --data-dir another agent
// holds (the operator must change it); 1 for any other failure (a data
// dir without the free space the agent needs among them).

func exitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage), errors.Is(err, daemon.ErrNodeNameTaken), errors.Is(err, daemon.ErrDataDirInUse):
		fmt.Fprintln(os.Stderr, "gtraind:", err)
		return 2
	case errors.As(err, new(lostContactError)):
		fmt.Fprintln(os.Stderr, "gtraind:", err)
		return supervisor.ExitLostContact
	}
	fmt.Fprintln(os.Stderr, "gtraind:", err)
	return 1
}

// lostContactError is a role's end caused by losing etcd, its lease or its
// master (coord.LostContact): its exit status tells the agent so.
type lostContactError struct{ err error }

func (e lostContactError) Error() string { return e.err.Error() }
func (e lostContactError) Unwrap() error { return e.err }

func markLostContact(err error) error {
	if coord.LostContact(err) {
		return lostContactError{err}
	}
	return err
}
