package e2erig

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// BinDir holds the gctl and gtraind the tests run; Main sets it.
var BinDir string

// Main is an e2e package's TestMain: it takes gctl and gtraind from
// $GTRAIN_BIN (make test sets it) or builds them, lets parallel tests run
// at once (see allowParallel), runs the tests and returns their exit code.
func Main(m *testing.M, parallel int) int {
	flag.Parse()
	allowParallel(parallel)
	BinDir = os.Getenv("GTRAIN_BIN")
	if BinDir == "" {
		dir, err := os.MkdirTemp("", "gtrain-e2e-bin")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		for _, c := range []string{"gctl", "gtraind"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(dir, c), "./cmd/"+c)
			cmd.Dir = RepoRoot()
			if out, err := cmd.CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "build %s: %v\n%s", c, err, out)
				return 1
			}
		}
		BinDir = dir
	}
	return m.Run()
}

// allowParallel lets n parallel tests run at once unless -parallel says
// otherwise. The default (GOMAXPROCS: 2 on the CI machine) would queue the
// rest in no fixed order: were the five-minute outage last, the package
// would wait for it after the others instead of during them.
func allowParallel(n int) {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	p := flag.Lookup("test.parallel")
	if cur, err := strconv.Atoi(p.Value.String()); !set && err == nil && cur < n {
		_ = p.Value.Set(strconv.Itoa(n))
	}
}
