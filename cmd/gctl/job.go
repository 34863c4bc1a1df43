package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/cmd/gctl/internal/render"
	"github.com/gtrain/gtrain/jobspec"
)

func (a *app) jobCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "job",
		Short: "Start, watch, inspect and stop training jobs",
	}
	asGroup(cmd)
	cmd.AddCommand(
		a.jobStartCommand(),
		a.jobListCommand(),
		a.jobStatusCommand(),
		a.jobWorkersCommand(),
		a.jobLogsCommand(),
		a.jobStopCommand(),
		a.jobResumeCommand(),
		a.jobScaleCommand(),
		a.jobEventsCommand(),
		a.jobPlotCommand(),
		a.jobWatchCommand(),
		a.jobModelCommand(),
	)
	return cmd
}

// submitResult is `job start --detach -o json`.
type submitResult struct {
	Name    string   `json:"name"`
	Workers []string `json:"workers"`
}

// stopResult is `job stop -o json`.
type stopResult struct {
	Name    string       `json:"name"`
	State   api.JobState `json:"state"`
	Stopped []string     `json:"stopped"`
	Purged  bool         `json:"purged"`
	Deleted []string     `json:"deleted,omitempty"` // with purged: what the purge deleted (purgeTargets)
}

func (a *app) jobStartCommand() *cobra.Command {
	var (
		file                       string
		name                       string
		trainers, pservers, passes int
		detach                     bool
		pkgDir                     string
	)
	cmd := &cobra.Command{
		Use:   "start -f FILE",
		Short: "Validate a job spec, submit it and follow the job until it ends",
		Long: `Parse and validate the job spec FILE (YAML, docs/reference.md#job-spec) locally,
apply the flag overrides, submit it to the agent and, unless --detach is given,
follow the job until it ends.

While following, a live progress line (pass, step, tasks, losses, state) is
rewritten in place on a terminal; otherwise a line is printed whenever the pass,
the state or the test loss changes. Each new job event is printed once. At the
end the final state, metrics and model_dir are printed. With -o json, progress
goes to stderr and the final job status document to stdout.

Exit code 0 when the job SUCCEEDED, 1 when it ended FAILED or STOPPED, 2 when
the spec or a flag is invalid (nothing is submitted then). Ctrl-C stops
following but leaves the job running.`,
		Example: `  gctl job start -f fit-a-line.yaml
  gctl job start -f fit-a-line.yaml --name fit-a-line-2 --trainers 4 --passes 10
  gctl job start -f fit-a-line.yaml --detach
  gctl job start -f my-model.yaml --package ./my-model   # upload the program's workspace`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usagef("job start needs the job spec: -f FILE (see `gctl job start --help`)")
			}
			spec, err := loadSpec(file)
			if err != nil {
				return err
			}
			overridden, err := applyOverrides(cmd, spec, name, trainers, pservers, passes)
			if err != nil {
				return err
			}
			var pkg []byte
			if pkgDir != "" {
				if pkg, err = packWorkspace(spec, pkgDir); err != nil {
					return err
				}
			}
			if err := spec.Validate(); err != nil {
				var fe *jobspec.FieldError
				if errors.As(err, &fe) && overridden[fe.Field] {
					return fmt.Errorf("%s: %w (the value came from --%s)", file, err, fe.Field)
				}
				return fmt.Errorf("%s: %w", file, err)
			}
			req, err := submitRequest(file, spec)
			if err != nil {
				return err
			}
			req.Package = pkg
			return a.startJob(cmd.Context(), req, spec.Name, detach)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "file", "f", "", "job spec file (YAML); data paths are relative to it")
	f.StringVar(&name, "name", "", "job name, overriding the spec's name")
	f.IntVar(&trainers, "trainers", 0, "number of trainers, overriding the spec")
	f.IntVar(&pservers, "pservers", 0, "number of pservers, overriding the spec")
	f.IntVar(&passes, "passes", 0, "number of passes over the training data, overriding the spec")
	f.BoolVar(&detach, "detach", false, "submit and return at once instead of following the job")
	f.StringVar(&pkgDir, "package", "", "upload DIR as the model program's workspace (instead of model.workspace on shared storage)")
	return cmd
}

// applyOverrides sets the spec fields whose flags were given and returns
// which were.
func applyOverrides(cmd *cobra.Command, spec *jobspec.Spec, name string, trainers, pservers, passes int) (map[string]bool, error) {
	flags := cmd.Flags()
	overridden := map[string]bool{}
	for _, f := range []string{"name", "trainers", "pservers", "passes"} {
		overridden[f] = flags.Changed(f)
	}
	if overridden["name"] {
		if err := jobspec.ValidateName(name); err != nil {
			return nil, fmt.Errorf("--name: %w", err)
		}
		spec.Name = name
	}
	if overridden["trainers"] {
		spec.Trainers = trainers
	}
	if overridden["pservers"] {
		spec.Pservers = pservers
	}
	if overridden["passes"] {
		spec.Passes = passes
	}
	return overridden, nil
}

// loadSpec parses the spec file; a missing file is the operator's typo, so
// it is rejected input (exit 2) like an invalid spec.
func loadSpec(file string) (*jobspec.Spec, error) {
	if info, err := os.Stat(file); err == nil && info.IsDir() {
		return nil, usagef("job spec %s is a directory: give the YAML file with -f, e.g. -f %s", file, filepath.Join(file, "job.yaml"))
	}
	spec, err := jobspec.ParseFile(file)
	if err == nil {
		return spec, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, usagef("job spec %s does not exist: give an existing file with -f", file)
	}
	return nil, err // jobspec names the file
}

// submitRequest carries the spec and names the file it came from, with the
// file's SHA-256: an agent that reads the same file there lets the job's
// paths lie under the file's directory (README "Confined paths and limits").
func submitRequest(file string, spec *jobspec.Spec) (*api.SubmitJobRequest, error) {
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("encode job spec %s: %w", file, err)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, fmt.Errorf("job spec %s: %w", file, err)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("reading job spec: %w", err)
	}
	sum := sha256.Sum256(data)
	return &api.SubmitJobRequest{SpecJson: specJSON, SpecFile: abs, SpecSha256: sum[:]}, nil
}

func (a *app) startJob(ctx context.Context, req *api.SubmitJobRequest, name string, detach bool) error {
	client, s, done, err := a.connect()
	if err != nil {
		return err
	}
	defer done()

	resp, err := callWithin(ctx, s, fmt.Sprintf("submit job %q", name), submitTimeout, func(ctx context.Context) (*api.SubmitJobResponse, error) {
		return client.SubmitJob(ctx, req)
	})
	if err != nil {
		return err
	}
	if resp.GetName() != "" {
		name = resp.GetName()
	}

	if detach {
		if a.output == render.OutputJSON {
			return render.WriteJSON(a.stdout, submitResult{Name: name, Workers: render.NonNil(resp.GetWorkers())})
		}
		_, err := fmt.Fprintf(a.stdout, "%s\nfollow it with: gctl job status %s\n", name, name)
		return err
	}

	progress, _ := a.progressOut()
	fmt.Fprintf(progress, "job %s submitted (%d workers); Ctrl-C stops following, not the job\n", name, len(resp.GetWorkers()))
	return a.followJob(ctx, client, s, name, nil)
}

// fetchJob connects and reads one job's status: for commands that need
// nothing else from the agent.
func (a *app) fetchJob(ctx context.Context, name string) (api.JobStatus, error) {
	client, s, done, err := a.connect()
	if err != nil {
		return api.JobStatus{}, err
	}
	defer done()
	return a.getJob(ctx, client, s, name)
}

func (a *app) getJob(ctx context.Context, client api.ControlClient, s settings, name string) (api.JobStatus, error) {
	doc, err := call(ctx, s, fmt.Sprintf("get job %q", name), func(ctx context.Context) (*api.Document, error) {
		return client.GetJob(ctx, &api.GetJobRequest{Name: name})
	})
	if err != nil {
		return api.JobStatus{}, err
	}
	return decodeDocument[api.JobStatus](doc, "job status of "+name)
}

func (a *app) jobListCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "List the jobs: NAME STATE PASS TRAINERS PSERVERS LOSS AGE",
		Long:    "List every job the cluster knows, one row per job. LOSS is the latest test loss, \"-\" before it is measured.\nWith -o json: an array of objects keyed name, state, pass, passes, trainers, pservers, loss, created, age.",
		Example: "  gctl job list\n  gctl job list -o json",
		Args:    exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listRows(cmd.Context(), a, "list jobs", "job list",
				func(ctx context.Context, c api.ControlClient) (*api.Document, error) {
					return c.ListJobs(ctx, &api.ListJobsRequest{})
				},
				func(rows []api.JobRow) error { return render.WriteJobTable(a.stdout, rows, a.now()) })
		},
	}
}

// jobNameArg validates NAME locally, so a malformed name is rejected with
// the naming rule before any call to the agent.
func jobNameArg(args []string) (string, error) {
	if err := jobspec.ValidateName(args[0]); err != nil {
		return "", err
	}
	return args[0], nil
}

func (a *app) jobStatusCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "status NAME",
		Short: "Show one job in detail",
		Long: `Show the job's state, pass, step, task queue, samples applied per pass, metrics,
model_dir, processes and newest events. With -o json: the job status document
(name, state, mode, pass, passes, step, tasks, samples_applied, trainers,
pservers, master, metrics, model_dir, events, ...; docs/reference.md#job-status-json).`,
		Example: "  gctl job status fit-a-line\n  gctl job status fit-a-line -o json",
		Args:    exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := jobNameArg(args)
			if err != nil {
				return err
			}
			st, err := a.fetchJob(cmd.Context(), name)
			if err != nil {
				return err
			}
			if a.output == render.OutputJSON {
				return render.WriteJSON(a.stdout, st)
			}
			return render.WriteJobStatus(a.stdout, st, a.loc)
		},
	}
}

func (a *app) jobWorkersCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "workers NAME",
		Short:   "List the job's processes: NAME NODE PID STATE RESTARTS GPUS START",
		Long:    "List the job's role processes (master, pservers, trainers), one row each. GPUS are the\ndevices of its node placement gave it (its CUDA_VISIBLE_DEVICES; resources.<role>.gpu).\nWith -o json: an array of objects keyed name, node, pid, state, restarts, start, gpus.",
		Example: "  gctl job workers fit-a-line",
		Args:    exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := jobNameArg(args)
			if err != nil {
				return err
			}
			return listRows(cmd.Context(), a, fmt.Sprintf("list workers of job %q", name), "worker list of "+name,
				func(ctx context.Context, c api.ControlClient) (*api.Document, error) {
					return c.ListWorkers(ctx, &api.GetJobRequest{Name: name})
				},
				func(rows []api.WorkerRow) error { return render.WriteWorkerTable(a.stdout, rows, a.loc) })
		},
	}
}

func (a *app) jobLogsCommand() *cobra.Command {
	var (
		worker string
		follow bool
		lines  int
	)
	cmd := &cobra.Command{
		Use:   "logs NAME",
		Short: "Print the logs of a job's workers",
		Long: `Print the logs of every worker of the job, merged by the time each line was
written and prefixed with "WORKER | ", or of one worker (-w trainer-0, -w pserver-1,
-w master) without prefix. Any agent answers: it fetches the logs kept on other nodes
from their agents. A worker whose log is on a node that is down gets a line saying so,
naming the node; with -w that is an error. -n shows the last N lines of each log file.
-f keeps streaming new lines, from every node, until the job has ended or Ctrl-C.
-o does not apply: logs are text.`,
		Example: "  gctl job logs fit-a-line\n  gctl job logs fit-a-line -w trainer-0 -f -n 20",
		Args:    exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := jobNameArg(args)
			if err != nil {
				return err
			}
			if lines < 0 {
				return usagef("-n %d: the number of lines must be 0 (all) or more", lines)
			}
			client, s, done, err := a.connect()
			if err != nil {
				return err
			}
			defer done()
			return a.streamLogs(cmd.Context(), client, s, &api.LogsRequest{
				Job: name, Worker: worker, Follow: follow, Lines: int32(min(lines, 1<<31-1)),
			})
		},
	}
	f := cmd.Flags()
	f.StringVarP(&worker, "worker", "w", "", "only this worker's log: master, pserver-N or trainer-N")
	f.BoolVarP(&follow, "follow", "f", false, "keep streaming new lines until Ctrl-C")
	f.IntVarP(&lines, "lines", "n", 0, "only the last N lines of each log file (0: all)")
	return cmd
}

func (a *app) streamLogs(ctx context.Context, client api.ControlClient, s settings, req *api.LogsRequest) error {
	op := fmt.Sprintf("logs of job %q", req.Job)
	if req.Worker != "" {
		op = fmt.Sprintf("logs of worker %q of job %q", req.Worker, req.Job)
	}
	stream, err := client.Logs(ctx, req)
	if err != nil {
		return a.endOfLogs(ctx, s, op, err)
	}
	prefix := req.Worker == ""
	for {
		chunk, err := stream.Recv()
		if err != nil {
			return a.endOfLogs(ctx, s, op, err)
		}
		if err := writeLogChunk(a.stdout, chunk, prefix); err != nil {
			return err
		}
	}
}

// endOfLogs treats the end of the stream and Ctrl-C during -f as success.
func (a *app) endOfLogs(ctx context.Context, s settings, op string, err error) error {
	if errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return &agentError{op: op, addr: s.Addr, from: s.AddrFrom, err: err}
}

// writeLogChunk writes a chunk of whole lines, each prefixed with its
// worker when several workers' logs are interleaved.
func writeLogChunk(w io.Writer, chunk *api.LogChunk, prefix bool) error {
	data := chunk.GetData()
	if !prefix {
		_, err := w.Write(data)
		return err
	}
	var b bytes.Buffer
	for len(data) > 0 {
		line, rest, found := bytes.Cut(data, []byte("\n"))
		b.WriteString(chunk.GetWorker())
		b.WriteString(" | ")
		b.Write(line)
		b.WriteByte('\n')
		if !found {
			break
		}
		data = rest
	}
	_, err := w.Write(b.Bytes())
	return err
}

func (a *app) jobStopCommand() *cobra.Command {
	var purge, yes bool
	cmd := &cobra.Command{
		Use:   "stop NAME",
		Short: "Stop every process of a job",
		Long: `Stop every process of the job; its state becomes STOPPED, and its model,
checkpoints, logs and record stay. With --purge the job's record is removed too,
so that its name can be used again, and every node deletes the job's directory:
its logs and, unless checkpoint.dir is set, its model and checkpoints. gctl says
what it deletes and asks on a terminal; --yes confirms without asking (scripts;
without a terminal --purge needs it).
With -o json: {"name", "state", "stopped": [workers], "purged", "deleted": [what]}.`,
		Example: "  gctl job stop fit-a-line\n  gctl job stop fit-a-line --purge\n  gctl job stop fit-a-line --purge --yes",
		Args:    exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := jobNameArg(args)
			if err != nil {
				return err
			}
			client, s, done, err := a.connect()
			if err != nil {
				return err
			}
			defer done()
			var deleted []string
			if purge {
				if deleted, err = a.confirmPurge(cmd.Context(), client, s, name, yes); err != nil {
					return err
				}
			}
			resp, err := call(cmd.Context(), s, fmt.Sprintf("stop job %q", name), func(ctx context.Context) (*api.StopJobResponse, error) {
				return client.StopJob(ctx, &api.StopJobRequest{Name: name, Purge: purge})
			})
			if err != nil {
				return err
			}
			res := stopResult{Name: name, State: api.JobState(resp.GetState()), Stopped: render.NonNil(resp.GetStopped()), Purged: purge, Deleted: deleted}
			if a.output == render.OutputJSON {
				return render.WriteJSON(a.stdout, res)
			}
			return writeStopResult(a.stdout, res)
		},
	}
	cmd.Flags().BoolVar(&purge, "purge", false, "also remove the job's record so the name can be reused, and its directory (logs, model, checkpoints) on every node")
	cmd.Flags().BoolVar(&yes, "yes", false, "with --purge: delete without asking")
	return cmd
}

func writeStopResult(w io.Writer, r stopResult) error {
	msg := fmt.Sprintf("job %s %s", r.Name, render.Dash(r.State))
	if len(r.Stopped) > 0 {
		msg += fmt.Sprintf("; stopped %d processes: %s", len(r.Stopped), strings.Join(r.Stopped, ", "))
	}
	if r.Purged {
		msg += fmt.Sprintf("\npurged; the name %s can be used again; deleted: %s", r.Name, strings.Join(r.Deleted, "; "))
	}
	_, err := fmt.Fprintln(w, msg)
	return err
}
