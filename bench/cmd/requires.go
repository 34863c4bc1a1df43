package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/gtrain/gtrain/bench"
	"github.com/gtrain/gtrain/internal/sandbox"
)

// need is something a benchmark group cannot run without, and how an
// operator gets it on Debian.
type need struct {
	what    string        // "Fashion-MNIST", "an etcd binary"
	install string        // "apt-get install dataset-fashion-mnist"
	present func() bool   // checked before the group runs
	here    func() string // what else to say on this machine, "" for nothing; nil: none
}

// Needs of the groups (a group without an entry needs only this repository).
// A group whose needs are missing prints NOT MEASURED with what to install,
// and the others still run: `make bench` on a fresh machine measures what it
// can. Add your group's needs here, built from the needs below or new ones.
var requires = map[string][]need{
	"recovery_node":  {needRoot, needIP, needEtcd},
	"step_time":      {needFashion},
	"scale_up":       {needFashion},
	"reshard_pause":  {needFashion},
	"pserver_memory": {needFashion},
	"program":        {needFashion, needTorch, needSandbox},
	"trainer_mlp":    {needFashion}, // PyTorch is its peer: without it the GEMM ceiling is still measured
}

var (
	needFashion = need{"Fashion-MNIST in /usr/share/datasets/fashion-mnist", "apt-get install dataset-fashion-mnist",
		filesExist("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz", "/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz"), nil}
	needEtcd = need{"an etcd binary on PATH", "apt-get install etcd-server", onPath("etcd"), nil}
	needIP   = need{"the ip command", "apt-get install iproute2", onPath("ip"), nil}
	needRoot = need{"root (network namespaces)", "run as root, as CI does", func() bool { return os.Geteuid() == 0 }, nil}
	// The bench's agent isolates model programs, as a node does by default,
	// and refuses program jobs where it cannot (internal/sandbox).
	needSandbox = need{"an agent that can isolate model programs (capabilities and cgroup controllers)",
		"run as root, as CI does, or as deploy/systemd/gtraind.service runs the agent",
		func() bool { return sandbox.Check() == nil }, func() string { return errText(sandbox.Check()) }}
	// The peers must run at their best: PyTorch on OpenBLAS, not on
	// Debian's reference BLAS (30x slower).
	needTorch = need{"PyTorch and numpy for /usr/bin/python3 (or the python3 that GTRAIN_PEER_PYTHON names)",
		"apt-get install python3-torch python3-numpy libopenblas0-pthread", bench.HasTorch,
		func() string { return otherPython(bench.TorchPython) }}
)

// otherPython says, for a peers' python that GTRAIN_PEER_PYTHON names, that
// Debian's packages do not serve it.
func otherPython(python string) string {
	if python == bench.DefaultTorchPython {
		return ""
	}
	return "here GTRAIN_PEER_PYTHON=" + python + ": install torch and numpy, on OpenBLAS or MKL, for that python"
}

// slowPeer is the need of a comparison whose PyTorch peer loaded blas, none
// of OpenBLAS and MKL (bench.PeerAtItsBest): Debian's reference BLAS, 30x
// slower, is no peer, and the figure is left out rather than flattered.
func slowPeer(blas []string) need {
	return need{what: fmt.Sprintf("a PyTorch peer on OpenBLAS or MKL (%s loaded %s)", bench.TorchPython, strings.Join(blas, " ")),
		install: "apt-get install libopenblas0-pthread, and update-alternatives --config libblas.so.3-x86_64-linux-gnu to pick it"}
}

// missing says what group lacks and how to install it; "" when nothing.
func missing(group string) string {
	var out []string
	for _, n := range requires[group] {
		if !n.present() {
			out = append(out, n.missing())
		}
	}
	return strings.Join(out, "; ")
}

func filesExist(paths ...string) func() bool {
	return func() bool {
		for _, p := range paths {
			if _, err := os.Stat(p); err != nil {
				return false
			}
		}
		return true
	}
}

func onPath(name string) func() bool {
	return func() bool { _, err := exec.LookPath(name); return err == nil }
}

// missing says what n is and how to install it.
func (n need) missing() string {
	if n.here != nil {
		if s := n.here(); s != "" {
			return fmt.Sprintf("needs %s (%s; %s)", n.what, n.install, s)
		}
	}
	return fmt.Sprintf("needs %s (%s)", n.what, n.install)
}

// errText is err's text, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
