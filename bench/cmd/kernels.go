package main

import (
	"debug/buildinfo"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/gtrain/gtrain/model"
)

// checkKernels refuses a bench built with other kernels than bin's gtraind:
// the GEMM ceilings it measures in its own process, and the kernels its notes
// name, would then not be the trainers' (a `go run ./bench/cmd` without
// -tags=openblas, beside a gtraind from `make build`, measured gonum's
// pure-Go ceiling, a quarter of OpenBLAS's, and called the trainers' kernels
// pure Go). A missing gtraind is the job benchmarks' concern, not this one's.
func checkKernels(bin string) error {
	path := filepath.Join(bin, "gtraind")
	info, err := buildinfo.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: cannot read its build settings: %w", path, err)
	}
	theirs, ours := openBLASBuild(info.Settings), openBLASBench()
	if theirs == ours {
		return nil
	}
	return fmt.Errorf("%s computes with %s, this bench with %s: its GEMM ceilings would measure other kernels than the trainers run; run `make bench`, which builds both with -tags=openblas when pkg-config finds OpenBLAS",
		path, kernelsName(theirs), kernelsName(ours))
}

// openBLASBuild says whether a binary's build settings chose OpenBLAS: the
// openblas tag, with cgo.
func openBLASBuild(settings []debug.BuildSetting) bool {
	var tags []string
	cgo := false
	for _, s := range settings {
		switch s.Key {
		case "-tags":
			tags = strings.Split(s.Value, ",")
		case "CGO_ENABLED":
			cgo = s.Value == "1"
		}
	}
	return cgo && slices.Contains(tags, "openblas")
}

// openBLASBench says whether this bench computes with OpenBLAS.
func openBLASBench() bool { return strings.HasPrefix(model.Kernels(), "OpenBLAS") }

func kernelsName(openBLAS bool) string {
	if openBLAS {
		return "OpenBLAS (built with -tags=openblas)"
	}
	return "gonum's pure-Go kernels (built without -tags=openblas)"
}
