package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/daemon"
	"github.com/gtrain/gtrain/daemon/supervisor"
	"github.com/gtrain/gtrain/internal/roleruntime"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/master"
	"github.com/gtrain/gtrain/pki"
	"github.com/gtrain/gtrain/pserver"
	"github.com/gtrain/gtrain/trainer"
	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"
)

type roleFlags struct {
	job, endpoints, dataDir, node, listen string
	index, sessionTTL                     int
	etcd                                  coord.EtcdConfig // all but Endpoints
	tls                                   pki.Files
	jobRev                                int64
	metricsFile                           string
}

func newRoleCmd(role string) *cobra.Command {
	var rf roleFlags
	cmd := &cobra.Command{
		Use:   role + " --job NAME --etcd-endpoints HOST:PORT",
		Short: "Run one " + role + " of a job in the foreground",
		Long: fmt.Sprintf(`Run one %s of a job in the foreground, against the job's record in etcd.
The agent starts roles this way; run it by hand only for debugging. It logs to stderr.`, role),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if rf.job == "" || rf.endpoints == "" {
				return fmt.Errorf("%w: --job and --etcd-endpoints are required", errUsage)
			}
			if err := jobspec.ValidateName(rf.job); err != nil {
				return fmt.Errorf("%w: --job: %v", errUsage, err)
			}
			if err := checkListen(role, rf.listen); err != nil {
				return err
			}
			if err := rf.tls.Validate(); err != nil {
				return fmt.Errorf("%w: %v", errUsage, err)
			}
			if rf.jobRev < 0 {
				return fmt.Errorf("%w: --job-rev %d: give the job record's create revision, or 0", errUsage, rf.jobRev)
			}
			log := roleLogger(os.Stderr, role, rf)
			ctx := cmd.Context()
			etcd := rf.etcd
			etcd.Endpoints = splitList(rf.endpoints)
			etcd.Password = os.Getenv(supervisor.EtcdPasswordEnv)
			cli, err := coord.DialConfig(ctx, etcd, log)
			if err != nil {
				return markLostContact(err)
			}
			defer cli.Close()
			return markLostContact(runRole(ctx, role, rf, cli, log))
		},
	}
	f := cmd.Flags()
	f.StringVar(&rf.job, "job", "", "job name")
	f.Int64Var(&rf.jobRev, "job-rev", 0, "the create revision of the job's record this process serves; it refuses another (0: any)")
	f.StringVar(&rf.endpoints, "etcd-endpoints", "", "etcd endpoints, HOST:PORT,...")
	f.StringVar(&rf.dataDir, "data-dir", "/var/lib/gtrain", "the agent's data dir (models, checkpoints)")
	f.StringVar(&rf.node, "node", "", "the node this runs on (for status)")
	f.StringVar(&rf.listen, "listen", "127.0.0.1:0", "address to serve on and publish (master, pserver): an address of this host the trainers reach; the agent passes ADVERTISE:0")
	f.StringVar(&rf.etcd.CACert, "etcd-cacert", "", "PEM CA file that verifies the etcd members (TLS)")
	f.StringVar(&rf.etcd.Cert, "etcd-cert", "", "PEM client certificate for etcd")
	f.StringVar(&rf.etcd.Key, "etcd-key", "", "PEM key of --etcd-cert")
	f.StringVar(&rf.etcd.User, "etcd-user", "", "etcd user; the password comes from "+supervisor.EtcdPasswordEnv)
	f.StringVar(&rf.tls.CA, "tls-ca", "", "PEM cluster CA: with --tls-cert and --tls-key, serve and dial the job's RPCs with mutual TLS")
	f.StringVar(&rf.tls.Cert, "tls-cert", "", "PEM node certificate (gtraind cert issue --node)")
	f.StringVar(&rf.tls.Key, "tls-key", "", "PEM key of --tls-cert")
	f.IntVar(&rf.sessionTTL, "session-ttl", 5, "seconds before this process's etcd lease expires after it dies")
	f.StringVar(&rf.metricsFile, "metrics-file", "", "serve this process's metrics on a loopback port and write its address into this file (the agent passes it with --metrics-addr)")
	if role != "master" {
		f.IntVar(&rf.index, "index", 0, role+" index")
	}
	return cmd
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
func roleLogger(w io.Writer, role string, rf roleFlags) *slog.Logger {
	log := newLogger(w, role).With("job", rf.job)
	if role != "master" {
		log = log.With("index", rf.index)
	}
	return log
}

func runRole(ctx context.Context, role string, rf roleFlags, cli *clientv3.Client, log *slog.Logger) error {
	reg, err := roleMetrics(ctx, rf.metricsFile, log)
	if err != nil {
		return err
	}
	switch role {
	case "master":
		cfg := master.DefaultConfig()
		cfg.Job, cfg.Node, cfg.DataDir, cfg.ListenAddr, cfg.SessionTTL, cfg.Log = rf.job, rf.node, rf.dataDir, rf.listen, rf.sessionTTL, log
		cfg.JobRev, cfg.TLS, cfg.Metrics = rf.jobRev, rf.tls, reg
		// A master coordinates: its step path is RPCs that threads on other
		// cores would only hand to each other. One core, like a 1-CPU role,
		// but every core for the pass-end evaluation, which no step overlaps.
		cfg.EvalProcs = runtime.GOMAXPROCS(0)
		roleruntime.LimitProcs(1, log)
		return master.Run(ctx, cli, cfg)
	case "pserver":
		cfg := pserver.DefaultConfig()
		cfg.Job, cfg.Index, cfg.Node, cfg.DataDir, cfg.ListenAddr, cfg.SessionTTL, cfg.Log = rf.job, rf.index, rf.node, rf.dataDir, rf.listen, rf.sessionTTL, log
		cfg.JobRev, cfg.TLS, cfg.Metrics = rf.jobRev, rf.tls, reg
		cfg.OwnsRuntime = true
		return pserver.Run(ctx, cli, cfg)
	default:
		cfg := trainer.DefaultConfig()
		cfg.Job, cfg.Worker, cfg.Node, cfg.SessionTTL, cfg.Log = rf.job, jobspec.TrainerName(rf.index), rf.node, rf.sessionTTL, log
		cfg.JobRev, cfg.TLS, cfg.Metrics = rf.jobRev, rf.tls, reg
		cfg.OwnsRuntime = true
		return trainer.Run(ctx, cli, cfg)
	}
}
