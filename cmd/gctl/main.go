package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/cmd/gctl/internal/render"
	"github.com/gtrain/gtrain/internal/retry"
)

// callTimeout bounds each unary call to the agent, so a silent agent turns
// into an error rather than a hung terminal.
const callTimeout = 15 * time.Second

// app is everything a command needs from the outside world, so that tests
// can replace the terminal, the clock and the network.
type app struct {
	stdout, stderr io.Writer
	stdoutTTY      bool
	stdin          io.Reader // answers to questions (job stop --purge), asked only when stdinTTY
	stdinTTY       bool
	loc            *time.Location
	now            func() time.Time
	home           string
	// wait returns when d has passed or ctx is done (with ctx's error).
	wait func(ctx context.Context, d time.Duration) error
	dial func(settings) (api.ControlClient, io.Closer, error)

	output      string
	addrFlag    *pflag.Flag
	configFlag  *pflag.Flag
	contextFlag *pflag.Flag
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, newApp(os.Stdout, os.Stderr), os.Args[1:])
	stop()
	os.Exit(code)
}

func newApp(stdout, stderr io.Writer) *app {
	home, _ := os.UserHomeDir()
	return &app{
		stdout:    stdout,
		stderr:    stderr,
		stdoutTTY: render.IsTerminal(stdout),
		stdin:     os.Stdin,
		stdinTTY:  render.IsTerminal(os.Stdin),
		loc:       time.Local,
		now:       time.Now,
		home:      home,
		wait:      retry.Sleep,
		dial:      dialAgent,
	}
}

// run executes one gctl command line and returns the process exit code.
func run(ctx context.Context, a *app, args []string) int {
	root := a.rootCommand()
	if args == nil {
		args = []string{} // nil would make cobra read os.Args
	}
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil {
		fmt.Fprintf(a.stderr, "gctl: %v\n", err)
	}
	return exitCode(err)
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "gctl",
		Short: "Operate a gtrain training cluster",
		Long: `gctl submits, watches and stops gtrain training jobs, lists the cluster's
nodes and converts raw data into record shards.

It talks to any gtrain agent (gtraind agent) of the cluster. The agent's address
is, from highest to lowest precedence: --addr, the GCTL_ADDR environment
variable, the endpoint of the current context in the config file, 127.0.0.1:7164.

Config file (--config, GCTL_CONFIG, default ~/.gtrain/config.yaml; it may be absent):

  current-context: prod
  contexts:
    - name: prod
      endpoint: agent1.example.org:7164
      tls: {ca: ca.pem, cert: me.pem, key: me-key.pem}   # optional; paths relative to the file
    - name: ci
      endpoint: agent1.example.org:7164
      tls: {ca: ca.pem}
      token_file: ci.token     # or token: ...; a bearer token instead of a certificate (TLS only)
    - name: dev
      endpoint: 127.0.0.1:7164

--context (GCTL_CONTEXT) picks another context. A context's tls settings and
token apply even when --addr or GCTL_ADDR replaces its endpoint. A call the
agent refuses for your role ends with exit 1 and names the role needed.

Exit codes: 0 ok; 1 failure (agent unreachable, job ended FAILED or STOPPED
while monitored, ...); 2 rejected input (bad flags or arguments, invalid job
spec or name, unknown job, name already in use).`,
		Example: `  gctl data convert --format whitespace --input housing.data --out data/housing --shards 4 --test-fraction 0.2 --normalize
  gctl job start -f fit-a-line.yaml
  gctl job list -o json
  gctl --addr 10.0.0.5:7164 node list`,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if a.output != render.OutputTable && a.output != render.OutputJSON {
				return usagef("-o %q is not an output format: use -o table or -o json", a.output)
			}
			return nil
		},
	}
	asGroup(root)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usagef("%s: %v (see `%s --help`)", cmd.CommandPath(), err, cmd.CommandPath())
	})

	pf := root.PersistentFlags()
	pf.String("addr", defaultAddr, "address HOST:PORT of a gtrain agent's API (env "+envAddr+")")
	pf.String("config", defaultConfigPath, "client config file with named contexts (env "+envConfig+")")
	pf.String("context", "", "context of the config file to use instead of its current-context (env "+envContext+")")
	pf.StringVarP(&a.output, "output", "o", render.OutputTable, "output format: table or json")
	a.addrFlag, a.configFlag, a.contextFlag = pf.Lookup("addr"), pf.Lookup("config"), pf.Lookup("context")

	root.AddCommand(a.jobCommand(), a.nodeCommand(), a.quotaCommand(), a.tokenCommand(), a.dataCommand())
	return root
}

// asGroup makes a command that only holds subcommands print its help when
// called bare and reject anything else as an unknown command (exit 2);
// cobra alone would print help and exit 0 for `gctl job bogus`.
func asGroup(cmd *cobra.Command) {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usagef("unknown command %q for %q; available: %s (see `%s --help`)",
				args[0], cmd.CommandPath(), subcommandNames(cmd), cmd.CommandPath())
		}
		return cmd.Help()
	}
}

func subcommandNames(cmd *cobra.Command) string {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return strings.Join(names, ", ")
}

// exactArgs rejects a wrong number of arguments with the usage spelled out.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != len(names) {
			return usagef("%s takes %d argument(s) (%s), got %d: usage `%s`",
				cmd.CommandPath(), len(names), strings.Join(names, " "), len(args), cmd.UseLine())
		}
		return nil
	}
}

// maxArgs accepts the named arguments, each optional, in order.
func maxArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > len(names) {
			return usagef("%s takes at most %d argument(s) ([%s]), got %d: usage `%s`",
				cmd.CommandPath(), len(names), strings.Join(names, " "), len(args), cmd.UseLine())
		}
		return nil
	}
}

// connect resolves the settings and dials the agent.
func (a *app) connect() (api.ControlClient, settings, func(), error) {
	s, err := resolveSettings(a.addrFlag, a.configFlag, a.contextFlag, a.home)
	if err != nil {
		return nil, s, nil, err
	}
	client, closer, err := a.dial(s)
	if err != nil {
		return nil, s, nil, err
	}
	return client, s, func() { _ = closer.Close() }, nil
}

// submitTimeout bounds a job's submit: the agent runs a program job's
// declare before it answers, and gives the program program.DefaultTimeout
// (60 s) for it; with callTimeout gctl gave up first, and
// said the agent did not answer while a program on a loaded node was
// still starting (seen in CI: an e2e submit over 15 s).
const submitTimeout = 60*time.Second + callTimeout

// call runs one unary call with the call timeout and wraps its error.
func call[T any](ctx context.Context, s settings, op string, fn func(context.Context) (T, error)) (T, error) {
	return callWithin(ctx, s, op, callTimeout, fn)
}

// callWithin is call with its own timeout.
func callWithin[T any](ctx context.Context, s settings, op string, timeout time.Duration, fn func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := fn(ctx)
	if err != nil {
		return v, &agentError{op: op, addr: s.Addr, from: s.AddrFrom, err: err}
	}
	return v, nil
}

// listRows is every listing command: fetch a document of rows from the agent,
// then print it as a JSON array (never null) or as a table.
func listRows[T any](ctx context.Context, a *app, op, what string,
	fetch func(context.Context, api.ControlClient) (*api.Document, error), table func([]T) error) error {
	client, s, done, err := a.connect()
	if err != nil {
		return err
	}
	defer done()
	doc, err := call(ctx, s, op, func(ctx context.Context) (*api.Document, error) { return fetch(ctx, client) })
	if err != nil {
		return err
	}
	rows, err := decodeDocument[[]T](doc, what)
	if err != nil {
		return err
	}
	if a.output == render.OutputJSON {
		return render.WriteJSON(a.stdout, render.NonNil(rows))
	}
	return table(rows)
}
