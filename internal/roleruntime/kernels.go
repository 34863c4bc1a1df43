package roleruntime

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/gtrain/gtrain/model"
)

// UseBetterKernels re-executes this process, same pid and arguments, with
// OPENBLAS_CORETYPE set to the kernels model.BetterKernels names, when
// OpenBLAS fell back to kernels without AVX on a CPU it does not know (its
// Prescott kernels ran a quarter of the speed of its SkylakeX ones on a
// 16-core Xeon VM). OpenBLAS reads the variable only as it loads, hence the
// exec. The variable then passes to every role the agent starts and to
// their programs, so that a node's roles run one set of kernels; an
// operator's own OPENBLAS_CORETYPE is never replaced. It returns when there
// is nothing to change, or when the exec failed (the trainer's log then
// warns, model.KernelWarning). Call it first thing in main, before any
// goroutine has work in flight.
func UseBetterKernels() {
	if os.Getenv(model.ChoseEnv) != "" {
		return // this process is the exec: never loop, whatever OpenBLAS made of the variable
	}
	if better, chose := model.BetterKernels(); better != "" {
		err := reexecWith(better, chose)
		fmt.Fprintf(os.Stderr, "gtrain: OpenBLAS chose its %s kernels; running again on %s failed: %v\n", chose, better, err)
	}
}

// reexecWith replaces this process's image with itself under the kernels
// better, remembering chose for model.Kernels. It execs the binary's path,
// not /proc/self/exe, which would rename the process "exe" for ps, pgrep
// and the journal; a binary replaced on disk since it started fails the
// exec, and the process goes on as it is.
func reexecWith(better, chose string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	// An empty OPENBLAS_CORETYPE= reads as unset; drop it, since C's getenv
	// would find it before the one appended.
	env := append(WithoutEnv(os.Environ(), "OPENBLAS_CORETYPE", model.ChoseEnv), "OPENBLAS_CORETYPE="+better, model.ChoseEnv+"="+chose)
	return syscall.Exec(exe, os.Args, env)
}

// WithoutEnv is env (NAME=value entries) without the entries of names.
func WithoutEnv(env []string, names ...string) []string {
	return slices.DeleteFunc(env, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(names, name)
	})
}
