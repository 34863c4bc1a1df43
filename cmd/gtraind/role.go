package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strings"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/daemon"
	"github.com/gtrain/gtrain/internal/rolecfg"
	"github.com/gtrain/gtrain/internal/roleruntime"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/master"
	"github.com/gtrain/gtrain/pserver"
	"github.com/gtrain/gtrain/trainer"
	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func newRoleCmd(role string) *cobra.Command {
	var flags *rolecfg.Parsed
	cmd := &cobra.Command{
		Use:   role + " --job NAME --etcd-endpoints HOST:PORT",
		Short: "Run one " + role + " of a job in the foreground",
		Long: fmt.Sprintf(`Run one %s of a job in the foreground, against the job's record in etcd.
The agent starts roles this way; run it by hand only for debugging. It logs to stderr.`, role),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := flags.Args(os.Getenv)
			if err != nil {
				return fmt.Errorf("%w: %v", errUsage, err)
			}
			if err := readEtcdPassword(&a); err != nil {
				return err
			}
			if err := checkRoleArgs(role, a); err != nil {
				return err
			}
			log := roleLogger(os.Stderr, a)
			ctx := cmd.Context()
			cli, err := coord.DialConfig(ctx, a.Etcd, log)
			if err != nil {
				return markLostContact(err)
			}
			defer cli.Close()
			return markLostContact(runRole(ctx, a, cli, log))
		},
	}
	flags = rolecfg.Flags(cmd.Flags(), role)
	return cmd
}

// checkRoleArgs refuses a command line a role cannot run with (exit 2).
func checkRoleArgs(role string, a rolecfg.Args) error {
	if a.Job == "" || len(a.Etcd.Endpoints) == 0 {
		return fmt.Errorf("%w: --job and --etcd-endpoints are required", errUsage)
	}
	if err := jobspec.ValidateName(a.Job); err != nil {
		return fmt.Errorf("%w: --job: %v", errUsage, err)
	}
	if err := checkListen(role, a.Listen); err != nil {
		return err
	}
	if err := a.TLS.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if a.JobRev < 0 {
		return fmt.Errorf("%w: --job-rev %d: give the job record's create revision, or 0", errUsage, a.JobRev)
	}
	return nil
}

// checkListen refuses a wildcard --listen: the master and pservers publish
// the address they bind, and trainers on other hosts dial it.
func checkListen(role, listen string) error {
	if role == "trainer" {
		return nil
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("%w: --listen %q is not HOST:PORT: %v", errUsage, listen, err)
	}
	if daemon.IsWildcardHost(host) {
		return fmt.Errorf("%w: --listen %s is a wildcard, but a %s publishes the address it binds: give an address of this host the trainers reach, e.g. 10.0.0.5:0", errUsage, listen, role)
	}
	return nil
}

// roleLogger is the log of one role process: every line names the role,
// its job and (but for the master) its index, so the code of the role must
// not add them again.
func roleLogger(w io.Writer, a rolecfg.Args) *slog.Logger {
	role, index, _ := jobspec.ParseWorker(a.Worker) // rolecfg.Parsed made it
	log := newLogger(w, role).With("job", a.Job)
	if index >= 0 {
		log = log.With("index", index)
	}
	return log
}

func runRole(ctx context.Context, a rolecfg.Args, cli *clientv3.Client, log *slog.Logger) error {
	reg, err := roleMetrics(ctx, a.MetricsFile, log)
	if err != nil {
		return err
	}
	role, index, _ := jobspec.ParseWorker(a.Worker)
	switch role {
	case jobspec.RoleMaster:
		cfg := master.DefaultConfig()
		cfg.Common, cfg.DataDir, cfg.ListenAddr = a.Common(log, reg), a.DataDir, a.Listen
		// A master coordinates: its step path is RPCs that threads on other
		// cores would only hand to each other. One core, like a 1-CPU role,
		// but every core for the pass-end evaluation, which no step overlaps.
		cfg.EvalProcs = runtime.GOMAXPROCS(0)
		roleruntime.LimitProcs(1, log)
		return master.Run(ctx, cli, cfg)
	case jobspec.RolePserver:
		cfg := pserver.DefaultConfig()
		cfg.Common, cfg.Index, cfg.DataDir, cfg.ListenAddr = a.Common(log, reg), index, a.DataDir, a.Listen
		cfg.OwnsRuntime = true
		return pserver.Run(ctx, cli, cfg)
	default:
		cfg := trainer.DefaultConfig()
		cfg.Common, cfg.Worker, cfg.DataDir = a.Common(log, reg), a.Worker, a.DataDir
		cfg.OwnsRuntime, cfg.ComputeCPUs = true, a.ComputeCPUs
		return trainer.Run(ctx, cli, cfg)
	}
}

// readEtcdPassword reads the password from --etcd-password-file, when
// given, over the environment's: the agent passes it so, never in the
// role's environment or on its command line.
func readEtcdPassword(a *rolecfg.Args) error {
	if a.EtcdPasswordFile == "" {
		return nil
	}
	b, err := os.ReadFile(a.EtcdPasswordFile)
	if err != nil {
		return fmt.Errorf("%w: --etcd-password-file: %v", errUsage, err)
	}
	a.Etcd.Password = strings.TrimSuffix(string(b), "\n")
	return nil
}
