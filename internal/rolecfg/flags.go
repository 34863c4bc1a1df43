package rolecfg

import (
	"strconv"
	"strings"

	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/cpuaffinity"
	"github.com/gtrain/gtrain/pki"
	"github.com/spf13/pflag"
)

// flag is one flag of the role command line and the field of Args it
// carries: Argv writes it and Flags declares it from this one entry.
type flag struct {
	name, usage string
	value       func(*Args) value
}

// value is a field of Args as a flag value; zero says Argv leaves it out.
type value interface {
	pflag.Value
	zero() bool
}

// roleFlags is the role command line but --index, in the order Argv
// writes it.
var roleFlags = append([]flag{
	{"job", "job name", func(a *Args) value { return (*stringValue)(&a.Job) }},
	{"job-rev", "the create revision of the job's record this process serves; it refuses another (0: any)",
		func(a *Args) value { return (*int64Value)(&a.JobRev) }},
	{"data-dir", "the agent's data dir (models, checkpoints)", func(a *Args) value { return (*stringValue)(&a.DataDir) }},
	{"node", "the node this runs on (for status)", func(a *Args) value { return (*stringValue)(&a.Node) }},
}, append(roleAccessFlags(),
	flag{"listen", "address to serve on and publish (master, pserver): an address of this host the trainers reach; the agent passes ADVERTISE:0",
		func(a *Args) value { return (*stringValue)(&a.Listen) }},
	flag{"metrics-file", "serve this process's metrics on a loopback port and write its address into this file (the agent passes it with --metrics-addr)",
		func(a *Args) value { return (*stringValue)(&a.MetricsFile) }},
	flag{"job-credential", "file holding the job's data-plane secret: the role sends a credential derived from it to its job's master and pservers, and as either of those refuses calls without it (the agent writes it)",
		func(a *Args) value { return (*stringValue)(&a.JobCredential) }},
	flag{"etcd-password-file", "file (0600) holding the password of --etcd-user, read over " + EtcdPasswordEnv + " (the agent writes it in its data dir)",
		func(a *Args) value { return (*stringValue)(&a.EtcdPasswordFile) }},
	flag{"session-ttl", "seconds before this process's etcd lease expires after it dies",
		func(a *Args) value { return (*intValue)(&a.SessionTTL) }},
	flag{"allow-unisolated-programs", "on a node that cannot isolate model programs, run them with this process's rights (the agent passes its own flag)",
		func(a *Args) value { return (*boolValue)(&a.AllowUnisolatedPrograms) }},
	flag{"allowed-path", "a directory the job's paths may lead under, besides --data-dir and the job's own directories (repeatable; the agent passes its own --allowed-path)",
		func(a *Args) value { return (*repeatedValue)(&a.AllowedPaths) }},
	flag{"agent-config", "the agent's --config file, hidden from model programs (the agent passes it)",
		func(a *Args) value { return (*stringValue)(&a.AgentConfig) }},
	flag{"gossip-key-file", "the agent's gossip key file, hidden from model programs (the agent passes it)",
		func(a *Args) value { return (*stringValue)(&a.GossipKeyFile) }},
	flag{"compute-cpus", "trainer of a built-in model: compute each micro-batch on these CPUs, 0,2,..., which the agent keeps for it (--exclusive-cpus)",
		func(a *Args) value { return (*cpuListValue)(&a.ComputeCPUs) }},
)...)

// accessFlag is a flag of how to reach etcd and of the TLS files, which
// gtraind agent and the roles share.
type accessFlag struct {
	name, usage string
	value       func(*coord.EtcdConfig, *pki.Files) value
}

var accessFlags = []accessFlag{
	{"etcd-endpoints", "etcd cluster, HOST:PORT,... (required; gtraind agent --dev starts its own)",
		func(e *coord.EtcdConfig, _ *pki.Files) value { return (*listValue)(&e.Endpoints) }},
	{"etcd-cacert", "PEM CA file that verifies the etcd members (TLS)",
		func(e *coord.EtcdConfig, _ *pki.Files) value { return (*stringValue)(&e.CACert) }},
	{"etcd-cert", "PEM client certificate for etcd (with --etcd-key)",
		func(e *coord.EtcdConfig, _ *pki.Files) value { return (*stringValue)(&e.Cert) }},
	{"etcd-key", "PEM key of --etcd-cert",
		func(e *coord.EtcdConfig, _ *pki.Files) value { return (*stringValue)(&e.Key) }},
	{"etcd-user", "etcd user (etcd auth enabled); the password comes from " + EtcdPasswordEnv + " (or a role's --etcd-password-file)",
		func(e *coord.EtcdConfig, _ *pki.Files) value { return (*stringValue)(&e.User) }},
	{"tls-ca", "PEM cluster CA (gtraind cert init): with --tls-cert and --tls-key, the agent's API and log relay and the roles' RPCs use mutual TLS",
		func(_ *coord.EtcdConfig, t *pki.Files) value { return (*stringValue)(&t.CA) }},
	{"tls-cert", "PEM node certificate (gtraind cert issue --node NAME --addr ADVERTISE-IP)",
		func(_ *coord.EtcdConfig, t *pki.Files) value { return (*stringValue)(&t.Cert) }},
	{"tls-key", "PEM key of --tls-cert",
		func(_ *coord.EtcdConfig, t *pki.Files) value { return (*stringValue)(&t.Key) }},
}

// AddAccessFlags declares on f the etcd and TLS flags gtraind agent shares
// with the roles, bound to etcd (all but the password) and tls.
func AddAccessFlags(f *pflag.FlagSet, etcd *coord.EtcdConfig, tls *pki.Files) {
	for _, fl := range accessFlags {
		f.Var(fl.value(etcd, tls), fl.name, fl.usage)
	}
}

// roleAccessFlags are accessFlags bound to the fields of Args.
func roleAccessFlags() []flag {
	out := make([]flag, len(accessFlags))
	for i, fl := range accessFlags {
		out[i] = flag{fl.name, fl.usage, func(a *Args) value { return fl.value(&a.Etcd, &a.TLS) }}
	}
	return out
}

type stringValue string

func (v *stringValue) String() string     { return string(*v) }
func (v *stringValue) Set(s string) error { *v = stringValue(s); return nil }
func (v *stringValue) Type() string       { return "string" }
func (v *stringValue) zero() bool         { return *v == "" }

// listValue is a comma-separated list; blank items are dropped, as the
// agent's --etcd-endpoints drops them.
type listValue []string

func (v *listValue) String() string { return strings.Join(*v, ",") }
func (v *listValue) Type() string   { return "string" }
func (v *listValue) zero() bool     { return len(*v) == 0 }
func (v *listValue) Set(s string) error {
	*v = nil
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*v = append(*v, p)
		}
	}
	return nil
}

type int64Value int64

func (v *int64Value) String() string { return strconv.FormatInt(int64(*v), 10) }
func (v *int64Value) Type() string   { return "int64" }
func (v *int64Value) zero() bool     { return *v == 0 }
func (v *int64Value) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, 64)
	*v = int64Value(n)
	return err
}

// boolValue takes its value as the next word, as Argv writes it.
type boolValue bool

func (v *boolValue) String() string { return strconv.FormatBool(bool(*v)) }
func (v *boolValue) Type() string   { return "bool" }
func (v *boolValue) zero() bool     { return !bool(*v) }
func (v *boolValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	*v = boolValue(b)
	return err
}

type intValue int

func (v *intValue) String() string { return strconv.Itoa(int(*v)) }
func (v *intValue) Type() string   { return "int" }
func (v *intValue) zero() bool     { return *v == 0 }
func (v *intValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, 64)
	*v = intValue(n)
	return err
}

// repeatedValue is a list written as one flag per item (Argv), so that an
// item may hold any character a command line carries, commas included.
type repeatedValue []string

func (v *repeatedValue) String() string     { return strings.Join(*v, ",") }
func (v *repeatedValue) Type() string       { return "stringArray" }
func (v *repeatedValue) zero() bool         { return len(*v) == 0 }
func (v *repeatedValue) Set(s string) error { *v = append(*v, s); return nil }

// cpuListValue is a CPU list, 0,2,3.
type cpuListValue []int

func (v *cpuListValue) String() string { return cpuaffinity.Format(*v) }
func (v *cpuListValue) Type() string   { return "cpus" }
func (v *cpuListValue) zero() bool     { return len(*v) == 0 }
func (v *cpuListValue) Set(s string) error {
	cpus, err := cpuaffinity.Parse(s)
	*v = cpus
	return err
}
