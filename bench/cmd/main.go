// Command bench runs gtrain's benchmarks (docs/reference.md#benchmarks) and writes bench/results.json.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gtrain/gtrain/bench"
	"github.com/gtrain/gtrain/internal/roleruntime"
)

func main() {
	// The GEMM ceiling is measured here with the roles' kernels (the agent
	// this starts inherits them, and so do the peers), and, where the
	// environment pins them, in a child without the pin (bench.UnpinnedGemm).
	roleruntime.UseBetterKernels()
	if child, err := bench.RunIfUnpinnedGemmChild(); child {
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: unpinned GEMM child:", err)
			os.Exit(1)
		}
		return
	}
	if rows := os.Getenv(bench.SparseMemoryChild); rows != "" {
		n, err := strconv.Atoi(rows)
		if err == nil {
			err = bench.RunSparseMemoryChild(n)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: sparse_memory child:", err)
			os.Exit(1)
		}
		return
	}
	out := flag.String("out", "bench/results.json", "where to write the results")
	quick := flag.Bool("quick", false, "smaller sizes (a smoke run)")
	bin := flag.String("bin", "bin", "directory with gtraind and gctl (for the benchmarks of real jobs)")
	only := flag.String("only", "", "comma-separated groups to run (default all): "+strings.Join(groupNames, ","))
	scaling := flag.String("scaling", "", "instead of the groups, print the MLP's records/s for these trainer counts (e.g. 1,2,4,8,16) against PyTorch DDP over gloo with as many processes (scripts/scaling.sh)")
	flag.StringVar(&bench.AgentLog, "agent-log", "", "a file the agents of the benchmarks' jobs also append their output to, as they run")
	flag.Parse()
	if err := checkKernels(*bin); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if *scaling != "" {
		if err := scalingCurves(*bin, *scaling); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*out, *bin, *only, *quick); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// sizes are the benchmarks' workloads; -quick makes them small.
type sizes struct {
	model         int // float32 parameters
	dispatchTasks int
	steps         int
	ckptRun       time.Duration
	ckptEvery     time.Duration
	quick         bool
}

func sizesFor(quick bool) sizes {
	if quick {
		return sizes{model: 1 << 20, dispatchTasks: 200, steps: 2, ckptRun: 2 * time.Second, ckptEvery: 500 * time.Millisecond, quick: true}
	}
	return sizes{model: 16 << 20, dispatchTasks: 2000, steps: 5, ckptRun: 30 * time.Second, ckptEvery: 10 * time.Second}
}

// table collects results, printing each as it comes.
// table holds the figures measured, and what was left out: a figure not
// measured or a group that failed, which the printed table lists after the
// figures (bench/results.json holds the figures measured only).
type table struct {
	results []bench.Result
	missed  []string
}

// leftOut says, as the run goes and again in the final table, that what
// was left out, and how ("NOT MEASURED: why", "FAILED: error").
func (t *table) leftOut(what, how string) {
	fmt.Fprintf(os.Stderr, "  %-22s %s\n", what, how)
	t.missed = append(t.missed, what+" "+how)
}

// notMeasured says that the figure what was not measured, and why.
func (t *table) notMeasured(what, why string) { t.leftOut(what, "NOT MEASURED: "+why) }

func (t *table) add(r bench.Result) {
	if r.Ceiling > 0 {
		r.Ratio = r.Value / r.Ceiling
	}
	t.results = append(t.results, r)
	fmt.Fprintf(os.Stderr, "  %-22s %12.1f %-10s ceiling %12.1f  ratio %.3f\n", r.Name, r.Value, r.Unit, r.Ceiling, r.Ratio)
	if r.Ratio > 1 && !lowerIsBetter[r.Name] && !againstPeer[r.Name] {
		fmt.Fprintf(os.Stderr, "  WARNING: %s is above its ceiling: the ceiling is not a true upper bound (or the run was noisy); fix the ceiling\n", r.Name)
	}
}

// againstPeer names the figures whose "ceiling" is a peer's figure (PyTorch
// measured in the same run), which gtrain may pass: the goal, not a bound.
var againstPeer = map[string]bool{"trainer_mlp": true, "program_mlp": true, "program_cnn": true, "recommender": true}

// lowerIsBetter names the figures whose "ceiling" is the floor they are
// compared with (a pause against the time of a memory copy).
var lowerIsBetter = map[string]bool{"checkpoint_pause": true, "step_time": true,
	"step_time_1": true, "step_time_4": true, "step_time_8": true, "pserver_memory": true,
	"program_roundtrip_1m": true, "sparse_memory": true,
	"recommender_rmse": true, "recommender_rmse_optimum": true}

// groupNames are the benchmark groups in the order they run.
var groupNames = []string{"pushpull", "optimizers", "dispatch", "checkpoints", "recovery", "recovery_node",
	"step_time", "scale_up", "reshard_pause", "pserver_memory", "trainer_mlp",
	"program_roundtrip", "program", "sparse", "recommender"}

func groups(bin string) map[string]func(*table, sizes) error {
	return map[string]func(*table, sizes) error{
		"pushpull":          measurePushPull,
		"optimizers":        measureOptimizers,
		"dispatch":          measureDispatch,
		"checkpoints":       measureCheckpoints,
		"recovery":          func(t *table, _ sizes) error { return measureRecovery(t, bin) },
		"recovery_node":     func(t *table, _ sizes) error { return measureNodeRecovery(t, bin) },
		"step_time":         func(t *table, _ sizes) error { return measureStepTime(t, bin) },
		"scale_up":          func(t *table, _ sizes) error { return measureScaleUp(t, bin) },
		"reshard_pause":     func(t *table, _ sizes) error { return measureReshardPause(t, bin) },
		"pserver_memory":    func(t *table, _ sizes) error { return measurePserverMemory(t, bin) },
		"trainer_mlp":       func(t *table, _ sizes) error { return measureTrainerMLP(t, bin) },
		"program_roundtrip": measureProgramRoundTrip,
		"program":           func(t *table, _ sizes) error { return measurePrograms(t, bin) },
		"sparse":            measureSparse,
		"recommender":       func(t *table, sz sizes) error { return measureRecommender(t, bin, sz.quick) },
	}
}

func run(out, bin, only string, quick bool) error {
	sz := sizesFor(quick)
	t := &table{}
	selected := groupNames
	if only != "" {
		selected = strings.Split(only, ",")
	}
	all := groups(bin)
	for _, g := range selected {
		if all[g] == nil {
			return fmt.Errorf("-only: no benchmark group %q (groups: %s)", g, strings.Join(groupNames, ","))
		}
	}
	fmt.Fprintln(os.Stderr, "measuring (each figure against a ceiling or peer from this run; its note says how each side was taken)...")
	var failed []error
	for _, g := range selected {
		if why := missing(g); why != "" {
			t.notMeasured(g, why)
			continue
		}
		// A group that fails is reported, and the others still run: the
		// figures measured are written, and the run then fails.
		if err := all[g](t, sz); err != nil {
			t.leftOut(g, fmt.Sprintf("FAILED: %v", err))
			failed = append(failed, fmt.Errorf("%s: %w", g, err))
		}
	}
	if err := t.write(os.Stdout, out); err != nil {
		failed = append(failed, err)
	}
	return errors.Join(failed...)
}

// write prints the table to w, then what was left out, and saves the
// figures as JSON in out.
func (t *table) write(w io.Writer, out string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVALUE\tUNIT\tCEILING\tRATIO")
	for _, r := range t.results {
		fmt.Fprintf(tw, "%s\t%.1f\t%s\t%.1f\t%.3f\n", r.Name, r.Value, r.Unit, r.Ceiling, r.Ratio)
	}
	tw.Flush()
	for _, m := range t.missed {
		fmt.Fprintln(w, m)
	}
	figures := t.results
	if figures == nil {
		figures = []bench.Result{} // [] with no figure, not null
	}
	b, err := json.MarshalIndent(figures, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(out, append(b, '\n'), 0o644)
}

// best runs a measurement n times and keeps the best: the machine's noise
// only ever slows a run down.
func best(n int, measure func() (float64, error)) (float64, error) {
	var top float64
	for range n {
		v, err := measure()
		if err != nil {
			return 0, err
		}
		top = max(top, v)
	}
	return top, nil
}

// bestInterleaved measures the ceiling before and after each of rounds runs
// of the measured loop and keeps the best of each side: a burst of noise
// cannot favour the measured side, and the ceiling, an upper bound, gets the
// more samples to find the machine at its quietest.
func bestInterleaved(rounds int, ceiling, measured func() (float64, error)) (c, m float64, err error) {
	cv, err := ceiling()
	if err != nil {
		return 0, 0, err
	}
	c = cv
	for range rounds {
		mv, err := measured()
		if err != nil {
			return 0, 0, err
		}
		if cv, err = ceiling(); err != nil {
			return 0, 0, err
		}
		c, m = max(c, cv), max(m, mv)
	}
	return c, m, nil
}
