package rolecfg

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pki"
	"github.com/spf13/pflag"
)

// EtcdPasswordEnv is where gtraind agent, and a role run by hand, find the
// etcd password: a command line is readable by every user of the host (ps,
// /proc/PID/cmdline). The agent hands it to its roles in a file instead
// (EtcdPasswordPath), so that no role's environment, nor what a role passes
// on to a model program, holds it.
const EtcdPasswordEnv = "GTRAIN_ETCD_PASSWORD"

// EtcdPasswordPath is the file (0600) in which the agent with data dir
// dataDir keeps the etcd password for its roles (--etcd-password-file):
// in the data dir, which no program sees.
func EtcdPasswordPath(dataDir string) string { return filepath.Join(dataDir, "etcd-password") }

// Args is what the agent tells a role process. A field left zero is not
// written, and the role takes the flag's default (Defaults): an agent never
// means an empty value.
type Args struct {
	// Worker is master, pserver-N or trainer-N: the subcommand and --index.
	Worker string
	Job    string
	// JobRev is the create revision of the job's record (the runner's
	// fence): a role refuses to run for a record of another revision, and
	// its checkpoint files carry it.
	JobRev int64
	// Etcd is the members the agent reached and its credentials; the
	// password never travels on the command line nor in the environment:
	// EtcdPasswordFile names the file holding it, which the role reads.
	Etcd             coord.EtcdConfig
	EtcdPasswordFile string
	TLS              pki.Files // the node certificate, for the roles' RPCs
	DataDir          string    // the agent's data dir
	Node             string
	// Listen is the HOST:PORT a master or pserver binds and publishes; the
	// agent passes ADVERTISE:0. Trainers serve nothing.
	Listen      string
	MetricsFile string // where the role writes the address of its metrics
	// JobCredential is the file (0600) holding the job's data-plane secret
	// (package jobauth): the path travels, never the secret.
	JobCredential string
	SessionTTL    int // seconds; the agent leaves it to the role's default
	// AllowUnisolatedPrograms is the agent's --allow-unisolated-programs:
	// on a node that cannot isolate programs (sandbox.Check), run them
	// with the role's rights rather than refuse them.
	AllowUnisolatedPrograms bool
	// AllowedPaths is the agent's --allowed-path: with DataDir and the
	// job's own directories, the roots the role opens the job's paths
	// beneath (Common.Roots).
	AllowedPaths []string
	// AgentConfig and GossipKeyFile are the agent's --config file and
	// gossip key file (--gossip-key @FILE): the role does not read them,
	// its model programs must not see them (ProgramPolicy).
	AgentConfig, GossipKeyFile string
	// ComputeCPUs are the CPUs the agent gave a trainer of a built-in
	// model for its computation alone (its --exclusive-cpus); none: it
	// computes where Linux runs it.
	ComputeCPUs []int
}

// DefaultSessionTTL is a role's etcd lease in seconds, unless told otherwise.
const DefaultSessionTTL = 5

// Defaults is what a role takes for the flags it is not given.
func Defaults() Args {
	return Args{DataDir: "/var/lib/gtrain", Listen: "127.0.0.1:0", SessionTTL: DefaultSessionTTL}
}

// Argv is the command line (after the executable) that runs a.Worker:
// ROLE --job JOB --job-rev REV --etcd-endpoints E1,E2 ... [--index I].
// It refuses a worker name or an etcd endpoint that would not read back.
func (a Args) Argv() ([]string, error) {
	role, index, err := jobspec.ParseWorker(a.Worker)
	if err != nil {
		return nil, err
	}
	for _, e := range a.Etcd.Endpoints {
		if e == "" || e != strings.TrimSpace(e) || strings.Contains(e, ",") {
			return nil, fmt.Errorf("etcd endpoint %q: an endpoint travels in a comma-separated list: give it without commas or surrounding spaces", e)
		}
	}
	argv := []string{role}
	for _, fl := range roleFlags {
		v := fl.value(&a)
		if list, ok := v.(*repeatedValue); ok {
			for _, item := range *list {
				argv = append(argv, "--"+fl.name, item)
			}
		} else if !v.zero() {
			argv = append(argv, "--"+fl.name, v.String())
		}
	}
	if index >= 0 {
		argv = append(argv, "--index", strconv.Itoa(index))
	}
	return argv, nil
}

// Parsed reads a role's command line back once its FlagSet is parsed.
type Parsed struct {
	role  string
	index int
	args  Args
}

// Flags declares the command line of `gtraind role` on f. role is
// jobspec.RoleMaster, RolePserver or RoleTrainer; all but the master take
// --index.
func Flags(f *pflag.FlagSet, role string) *Parsed {
	p := &Parsed{role: role, args: Defaults()}
	for _, fl := range roleFlags {
		f.Var(fl.value(&p.args), fl.name, fl.usage)
	}
	if role != jobspec.RoleMaster {
		f.IntVar(&p.index, "index", 0, role+" index")
	}
	return p
}

// Args is the command line read, with the etcd password that getenv
// (os.Getenv) finds under EtcdPasswordEnv: a role run by hand. The caller
// reads EtcdPasswordFile, when given, over it (this package reads no file).
func (p *Parsed) Args(getenv func(string) string) (Args, error) {
	a := p.args
	switch {
	case p.role == jobspec.RoleMaster:
		a.Worker = jobspec.MasterName
	case p.index < 0:
		return Args{}, fmt.Errorf("--index %d: give the %s's index, 0 or more", p.index, p.role)
	default:
		a.Worker = p.role + "-" + strconv.Itoa(p.index)
	}
	if _, _, err := jobspec.ParseWorker(a.Worker); err != nil {
		return Args{}, err
	}
	a.Etcd.Password = getenv(EtcdPasswordEnv)
	return a, nil
}

// Parse reads a command line Argv wrote (role first) and the environment
// getenv reads; it is what `gtraind role` does through Flags.
func Parse(argv []string, getenv func(string) string) (Args, error) {
	if len(argv) == 0 {
		return Args{}, fmt.Errorf("empty role command line: want ROLE --job JOB ...")
	}
	f := pflag.NewFlagSet(argv[0], pflag.ContinueOnError)
	p := Flags(f, argv[0])
	if err := f.Parse(argv[1:]); err != nil {
		return Args{}, err
	}
	if f.NArg() > 0 {
		return Args{}, fmt.Errorf("%s: unexpected arguments %q", argv[0], f.Args())
	}
	return p.Args(getenv)
}
