package supervisor

import (
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/jobdir"
	"github.com/gtrain/gtrain/internal/rolecfg"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pki"
)

// ExitLostContact is the exit status of a role that stopped because it lost
// etcd, its etcd lease or its job's master (coord.LostContact): the agent
// restarts it without counting the exit against the crash budget.
// (EX_TEMPFAIL of sysexits.h: try again later.)
const ExitLostContact = 75

// roleLaunch is what every role process of this node is started with.
type roleLaunch struct {
	exe     string
	etcd    coord.EtcdConfig // the members the agent reached, and its credentials
	dataDir string
	node    string
	// advertise is the host the master and pservers bind (port 0) and
	// publish: an address of this node the other nodes can reach.
	advertise string
	tls       pki.Files // this node's certificate, for the roles' RPCs
	metrics   bool      // roles serve their metrics for the agent's /metrics
	// unisolated is --allow-unisolated-programs, for the roles.
	unisolated bool
	allowed    []string // --allowed-path, for the roles
	// The agent's files the roles' programs must not see.
	configFile, gossipKeyFile string
}

func newRoleLaunch(cfg Config) roleLaunch {
	return roleLaunch{exe: cfg.Exe, etcd: cfg.Etcd, dataDir: cfg.DataDir, node: cfg.NodeName, advertise: cfg.AdvertiseAddr,
		tls: cfg.TLS, metrics: cfg.Metrics, unisolated: cfg.AllowUnisolatedPrograms,
		allowed: cfg.AllowedPaths, configFile: cfg.ConfigFile, gossipKeyFile: cfg.GossipKeyFile}
}

// systemdEnv are the variables systemd hands the agent for sd_notify; role
// processes must not inherit them (they would speak for the agent).
var systemdEnv = []string{"NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"}

// cudaVisibleDevices is the variable that pins a role, and the model
// program it starts, to the GPUs placement gave it.
const cudaVisibleDevices = "CUDA_VISIBLE_DEVICES"

// command is the child process that runs worker of job, pinned to the
// node's GPUs gpus (none: it sees no GPU, so that it cannot take the
// devices of the roles that asked for them); a trainer computes on
// computeCPUs when the agent gave it CPUs of its own (cpus.go).
func (l roleLaunch) command(job, worker string, jobRev int64, gpus, computeCPUs []int) (*exec.Cmd, error) {
	a := l.roleArgs(job, worker, jobRev)
	a.ComputeCPUs = computeCPUs
	args, err := a.Argv()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(l.exe, args...)
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return name == rolecfg.EtcdPasswordEnv || name == cudaVisibleDevices || slices.Contains(systemdEnv, name)
	})
	// The etcd password goes by file (Args.EtcdPasswordFile), never by the
	// environment: a role passes its environment on to the model program
	// it starts without a sandbox (--allow-unisolated-programs).
	env = append(env, cudaVisibleDevices+"="+deviceList(gpus))
	// A role's products run on threads of its own over OpenBLAS calls that
	// must each stay on one thread (model/gemm.go): an OpenMP build of
	// OpenBLAS (Debian's libopenblas0-openmp alternative) would otherwise
	// follow OMP_NUM_THREADS, every core, on each call. A trainer's program
	// gets its own thread count (program.Config.Threads).
	env = append(env, "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1")
	cmd.Env = env
	return cmd, nil
}

// deviceList is GPU indices as CUDA_VISIBLE_DEVICES takes them: "0,2".
func deviceList(gpus []int) string {
	parts := make([]string, len(gpus))
	for i, d := range gpus {
		parts[i] = strconv.Itoa(d)
	}
	return strings.Join(parts, ",")
}

// args is the command line (after the executable) that runs worker.
func (l roleLaunch) args(job, worker string, jobRev int64) ([]string, error) {
	return l.roleArgs(job, worker, jobRev).Argv()
}

// roleArgs is what the role process of worker is told. jobRev is the create
// revision of the job's record (the runner's fence).
func (l roleLaunch) roleArgs(job, worker string, jobRev int64) rolecfg.Args {
	a := rolecfg.Args{Worker: worker, Job: job, JobRev: jobRev, Etcd: l.etcd, TLS: l.tls, DataDir: l.dataDir, Node: l.node,
		AllowUnisolatedPrograms: l.unisolated, JobCredential: jobdir.Credential(l.dataDir, job),
		AllowedPaths: l.allowed, AgentConfig: l.configFile, GossipKeyFile: l.gossipKeyFile}
	if l.etcd.Password != "" { // the agent wrote it there (daemon: writeEtcdPassword)
		a.EtcdPasswordFile = rolecfg.EtcdPasswordPath(l.dataDir)
	}
	if role, _, _ := jobspec.ParseWorker(worker); role != jobspec.RoleTrainer && l.advertise != "" { // trainers serve nothing
		a.Listen = net.JoinHostPort(l.advertise, "0")
	}
	if l.metrics {
		a.MetricsFile = jobdir.MetricsAddr(l.dataDir, job, worker)
	}
	return a
}

// isRoleCmdline reports whether a NUL-separated /proc/PID/cmdline is the
// process that runs worker of job, so that a PID left in a WorkerRecord by a
// previous agent is only killed when it still is that role (PIDs get reused).
func isRoleCmdline(cmdline []byte, job, worker string) bool {
	role, index, err := jobspec.ParseWorker(worker)
	if err != nil {
		return false
	}
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	if len(args) < 2 || args[1] != role {
		return false
	}
	flag := func(name string) (string, bool) {
		for i := 2; i < len(args); i++ {
			if args[i] == name && i+1 < len(args) {
				return args[i+1], true
			}
			if v, ok := strings.CutPrefix(args[i], name+"="); ok {
				return v, true
			}
		}
		return "", false
	}
	if j, ok := flag("--job"); !ok || j != job {
		return false
	}
	if index >= 0 {
		if i, ok := flag("--index"); !ok || i != strconv.Itoa(index) {
			return false
		}
	}
	return true
}
