package daemon

import (
	"github.com/gtrain/gtrain/internal/rolecfg"
	"github.com/gtrain/gtrain/internal/sandbox"
)

// programPolicy is how this node runs model programs: the submit-time
// declare in the agent, and (through --allow-unisolated-programs on their
// command line) its roles, which decide alike.
func (c Config) programPolicy() sandbox.Policy {
	return rolecfg.ProgramPolicy(c.AllowUnisolatedPrograms, c.DataDir, c.TLS, c.EtcdKey, c.ConfigFile, c.GossipKeyFile)
}

// logProgramPolicy says at start whether this node runs program jobs, and
// how: a node that cannot isolate them refuses them, loudly, unless the
// admin chose otherwise.
func (c Config) logProgramPolicy() {
	p := c.programPolicy()
	switch p.Mode {
	case sandbox.Refuse:
		c.Log.Error("this node refuses program jobs (model.kind program): it cannot isolate them", "reason", p.Reason,
			"fix", "run the agent as root on a node with cgroup memory and pids controllers, or pass --allow-unisolated-programs")
	case sandbox.Unisolated:
		c.Log.Warn("program jobs run UNISOLATED on this node (--allow-unisolated-programs): with the agent's uid, environment and files",
			"reason", p.Reason)
	default:
		c.Log.Info("program jobs run sandboxed", "uids", "61184-65519", "pids_max", sandbox.DefaultPids)
	}
}
