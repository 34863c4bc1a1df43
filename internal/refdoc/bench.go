package refdoc

import (
	"fmt"
	"go/ast"
	"go/token"
	"strconv"
	"strings"
)

// benchMain and benchRequires are where bench/cmd declares its groups and
// what each needs; the reference reads them from the source because
// bench/cmd is a main package.
const (
	benchMain     = "bench/cmd/main.go"
	benchRequires = "bench/cmd/requires.go"
)

// benchGroups says what each group of `make bench` measures, as figure:
// ceiling pairs. trainer_mlp's "3 rounds" is bench/cmd's mlpRounds.
var benchGroups = map[string]string{
	"pushpull":          "`pserver_pushpull`: MB/s of gradient push plus parameter pull through real pservers over gRPC; ceiling: raw TCP loopback MB/s",
	"optimizers":        "`optimizer_sgd`, `optimizer_adam`: parameters/s of each update loop; ceiling: a STREAM-style loop with the same reads and writes per parameter",
	"dispatch":          "`master_dispatch_1`, `master_dispatch_64`: tasks/s handed out and acknowledged with the state durable in etcd, by 1 and by 64 concurrent trainers; ceiling: serial fenced etcd txn/s, 64-way etcd put/s",
	"checkpoints":       "`checkpoint_pause` (ms a pserver stops serving to snapshot; lower is better; floor: a memory copy of the same size) and `checkpoint_throughput` (steps/s with checkpoints against without)",
	"recovery":          "`recovery_pserver`, `recovery_trainer`, `recovery_master`: seconds from SIGKILL to the next applied step; absolute",
	"recovery_node":     "`recovery_node`: seconds from a host crash (a network namespace cut off) to the job's next applied step; absolute",
	"step_time":         "`step_time`, `step_time_1`, `_4`, `_8`: ms per sync step of a real job (softmax 784→10 on Fashion-MNIST, global batch 64); lower is better; floor: one push+pull round trip through the real pserver",
	"scale_up":          "`scale_up`: seconds from `gctl job scale --trainers 3` to the first step that includes the new trainer; absolute",
	"reshard_pause":     "`reshard_pause`: ms of training paused re-sharding a 64 MiB model from 2 to 3 pservers; absolute",
	"pserver_memory":    "`pserver_memory`: a pserver's peak resident memory running Adam with checkpoints on, as a multiple of parameters plus optimizer state (lower is better); `pserver_memory_mib` the same in MiB",
	"trainer_mlp":       "`trainer_mlp`, `trainer_mlp_gemm`, `trainer_mlp_threads`, `scaling_mlp`: records/s of trainers training MLP 784-1024-1024-10; ceilings: single-threaded PyTorch on the same model and batch (when installed), the machine's float32 GEMM rate (where the environment pins `OPENBLAS_CORETYPE`, the faster of its kernels and those OpenBLAS would choose without it), twice one trainer; 3 rounds of gtrain's jobs, the peer and the GEMM rate, alternated, each figure its best round",
	"program_roundtrip": "`program_roundtrip_1m`: ms of a 1 M-parameter round trip through a do-nothing program; floor: a 2 × 4 MB memcpy",
	"program":           "`program_mlp`, `program_cnn`: records/s of a PyTorch program through the adapter; ceiling: plain PyTorch in one process",
	"recommender":       "`recommender`: records/s of the built-in recommender (interaction dot) training `gctl data synth movielens` ratings as a real job, 1 trainer of cpu 1; ceiling: single-process PyTorch (nn.EmbeddingBag, sparse gradients, the same model, records, optimizer, batch and passes; when installed), goal ≥ 1.0. `recommender_rmse`: its test RMSE against PyTorch's (lower is better; goal ≤ 1.01). `recommender_rmse_optimum`: against the planted model's, optimum.json's `rmse_test` (goal ≤ 1.05)",
	"sparse":            "`sparse_pull_push`: rows/s a pserver pulls and updates over gRPC on loopback (dimension 16, adagrad, Zipf-like ids from 10 M); ceiling: random 64-byte gathers. `sparse_memory`: peak RSS of a process holding 10 M touched rows over rows × (values + state + id) (lower is better; goal ≤ 1.5× + 64 MiB); `sparse_untouched_mib`: what declaring a 1 G-row table and reading 1 M rows costs",
}

// BenchTable renders the benchmark groups in the order they run, with what
// each needs (from bench/cmd/requires.go) and what it measures.
func BenchTable() (string, error) {
	groups, err := benchGroupNames()
	if err != nil {
		return "", err
	}
	fields := make([]Field, len(groups))
	for i, g := range groups {
		fields[i] = Field{Path: g}
	}
	if err := coverage(fields, benchGroups); err != nil {
		return "", fmt.Errorf("%s groupNames: %w (benchGroups in internal/refdoc/bench.go)", benchMain, err)
	}
	needs, err := benchNeeds()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("| group | needs | measures |\n|---|---|---|\n")
	for _, g := range groups {
		need := strings.Join(needs[g], "; ")
		if need == "" {
			need = "this repository only"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", g, cell(need), cell(benchGroups[g]))
	}
	return b.String(), nil
}

// benchGroupNames reads the string literals of var groupNames.
func benchGroupNames() ([]string, error) {
	lit, err := varLiteral(benchMain, "groupNames")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range lit.Elts {
		if s, ok := stringLit(e); ok {
			names = append(names, s)
		}
	}
	return names, nil
}

// benchNeeds reads var requires (group -> need variables) and each need
// variable's first two fields (what, how to install) into "what (install)".
func benchNeeds() (map[string][]string, error) {
	lit, err := varLiteral(benchRequires, "requires")
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, e := range lit.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			return nil, fmt.Errorf("%s: requires is not a map literal", benchRequires)
		}
		list, ok := kv.Value.(*ast.CompositeLit)
		if !ok {
			return nil, fmt.Errorf("%s: requires[%s] is not a list of needs", benchRequires, kv.Key)
		}
		group, _ := stringLit(kv.Key)
		for _, n := range list.Elts {
			need, err := needLiteral(n)
			if err != nil {
				return nil, err
			}
			what, _ := stringLit(need.Elts[0])
			install, _ := stringLit(need.Elts[1])
			out[group] = append(out[group], fmt.Sprintf("%s (`%s`)", what, install))
		}
	}
	return out, nil
}

// needLiteral is the literal of a need variable, which must spell out at
// least what is needed and how to install it.
func needLiteral(e ast.Expr) (*ast.CompositeLit, error) {
	id, ok := e.(*ast.Ident)
	if !ok {
		return nil, fmt.Errorf("%s: a need in requires is not a variable", benchRequires)
	}
	lit, err := varLiteral(benchRequires, id.Name)
	if err == nil && len(lit.Elts) < 2 {
		err = fmt.Errorf("%s: %s does not start with what and install", benchRequires, id.Name)
	}
	return lit, err
}

// varLiteral finds the composite literal a package-level var is set to.
func varLiteral(path, name string) (*ast.CompositeLit, error) {
	specs, err := valueSpecs(path, token.VAR)
	if err != nil {
		return nil, err
	}
	for _, vs := range specs {
		for i, id := range vs.Names {
			if id.Name != name || i >= len(vs.Values) {
				continue
			}
			if lit, ok := vs.Values[i].(*ast.CompositeLit); ok {
				return lit, nil
			}
		}
	}
	return nil, fmt.Errorf("%s: no var %s set to a composite literal", path, name)
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}
