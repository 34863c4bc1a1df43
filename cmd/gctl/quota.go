package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/cmd/gctl/internal/render"
	"github.com/gtrain/gtrain/jobspec"
)

func (a *app) quotaCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quota",
		Short: "Read and set per-user quotas of cpu, memory, gpus and running jobs",
	}
	asGroup(cmd)
	cmd.AddCommand(a.quotaGetCommand(), a.quotaSetCommand())
	return cmd
}

func (a *app) quotaGetCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "get [USER]",
		Short: "Show a user's quota and what the user's running jobs use",
		Long: `Show the quota of USER (default: you, the caller of the agent) and what the
user's jobs with placed workers ask now. "-" is no limit; a user nobody set a
quota for has none. A user reads its own quota; another user's needs admin.
With -o json: {"user", "cpu", "memory" (bytes), "gpus", "jobs" (null: no limit),
"cpu_used", "memory_used", "gpus_used", "jobs_used"}.`,
		Example: "  gctl quota get\n  gctl quota get alice -o json",
		Args:    maxArgs("USER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := &api.QuotaRequest{}
			if len(args) == 1 {
				req.User = args[0]
			}
			return a.showQuota(cmd.Context(), "read the quota", func(ctx context.Context, c api.ControlClient) (*api.Document, error) {
				return c.GetQuota(ctx, req)
			})
		},
	}
}

func (a *app) quotaSetCommand() *cobra.Command {
	var cpu float64
	var memory string
	var gpus, jobs int
	cmd := &cobra.Command{
		Use:   "set USER [--cpu C] [--memory M] [--gpus G] [--jobs J]",
		Short: "Set a user's quota (admin)",
		Long: `Replace the quota of USER (admin only): the jobs USER submitted may together ask
at most C CPUs, M memory and G GPUs for their placed workers, and at most J of
them may be placed. A limit left out is no limit. A job that would go over
stays PENDING, its reason naming the limit ("over quota of user alice: asks 4
cpu, 6 of 8 in use by running jobs"), and starts once the user's running jobs
leave room. Jobs already running are never stopped by a lower quota.
With -o json: the quota as ` + "`gctl quota get -o json`" + ` shows it.`,
		Example: "  gctl quota set alice --cpu 8 --memory 16Gi --gpus 2 --jobs 3",
		Args:    exactArgs("USER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := quotaRequest(cmd, args[0], cpu, memory, gpus, jobs)
			if err != nil {
				return err
			}
			return a.showQuota(cmd.Context(), "set the quota of "+args[0], func(ctx context.Context, c api.ControlClient) (*api.Document, error) {
				return c.SetQuota(ctx, req)
			})
		},
	}
	cmd.Flags().Float64Var(&cpu, "cpu", 0, "CPUs the user's placed workers may ask together")
	cmd.Flags().StringVar(&memory, "memory", "", "memory the user's placed workers may ask together (512Mi, 16Gi, ...)")
	cmd.Flags().IntVar(&gpus, "gpus", 0, "GPUs the user's placed workers may ask together")
	cmd.Flags().IntVar(&jobs, "jobs", 0, "jobs of the user that may be placed at once")
	for _, f := range []string{"cpu", "memory", "gpus", "jobs"} {
		cmd.Flags().Lookup(f).DefValue = "no limit" // a limit left out is none, not 0
	}
	return cmd
}

// quotaRequest reads the flags given into a SetQuotaRequest; bad values
// are rejected input (exit 2).
func quotaRequest(cmd *cobra.Command, user string, cpu float64, memory string, gpus, jobs int) (*api.SetQuotaRequest, error) {
	req := &api.SetQuotaRequest{User: user}
	flags := cmd.Flags()
	if flags.Changed("cpu") {
		if cpu < 0 {
			return nil, usagef("--cpu must be 0 or more, got %v", cpu)
		}
		req.Cpu = &cpu
	}
	if flags.Changed("memory") {
		n, err := jobspec.Resource{Memory: memory}.MemoryBytes()
		if err != nil || memory == "" {
			return nil, usagef("--memory: %v", err)
		}
		req.Memory = &n
	}
	for _, f := range []struct {
		name string
		v    int
		dst  **int32
	}{{"gpus", gpus, &req.Gpus}, {"jobs", jobs, &req.Jobs}} {
		if !flags.Changed(f.name) {
			continue
		}
		if f.v < 0 || f.v > 1<<30 {
			return nil, usagef("--%s must be 0 or more, got %d", f.name, f.v)
		}
		n := int32(f.v)
		*f.dst = &n
	}
	return req, nil
}

// showQuota makes the call and prints the quota it answers.
func (a *app) showQuota(ctx context.Context, op string, do func(context.Context, api.ControlClient) (*api.Document, error)) error {
	client, s, done, err := a.connect()
	if err != nil {
		return err
	}
	defer done()
	doc, err := call(ctx, s, op, func(ctx context.Context) (*api.Document, error) { return do(ctx, client) })
	if err != nil {
		return err
	}
	row, err := decodeDocument[api.QuotaRow](doc, "quota")
	if err != nil {
		return err
	}
	if a.output == render.OutputJSON {
		return render.WriteJSON(a.stdout, row)
	}
	return writeQuotaTable(a.stdout, row)
}

// writeQuotaTable is the table view: one row per dimension, USED of LIMIT.
func writeQuotaTable(w io.Writer, q api.QuotaRow) error {
	tw := render.NewTable(w)
	fmt.Fprintf(tw, "USER\tRESOURCE\tUSED\tLIMIT\n")
	limit := func(set bool, v string) string {
		if !set {
			return "-"
		}
		return v
	}
	var cpu, mem, gpus, jobs string
	if q.CPU != nil {
		cpu = strconv.FormatFloat(*q.CPU, 'f', -1, 64)
	}
	if q.Memory != nil {
		mem = jobspec.FormatMemory(*q.Memory)
	}
	if q.GPUs != nil {
		gpus = strconv.Itoa(*q.GPUs)
	}
	if q.Jobs != nil {
		jobs = strconv.Itoa(*q.Jobs)
	}
	fmt.Fprintf(tw, "%s\tcpu\t%s\t%s\n", q.User, strconv.FormatFloat(q.CPUUsed, 'f', -1, 64), limit(q.CPU != nil, cpu))
	fmt.Fprintf(tw, "%s\tmemory\t%s\t%s\n", q.User, jobspec.FormatMemory(q.MemoryUsed), limit(q.Memory != nil, mem))
	fmt.Fprintf(tw, "%s\tgpus\t%d\t%s\n", q.User, q.GPUsUsed, limit(q.GPUs != nil, gpus))
	fmt.Fprintf(tw, "%s\tjobs\t%d\t%s\n", q.User, q.JobsUsed, limit(q.Jobs != nil, jobs))
	return tw.Flush()
}
