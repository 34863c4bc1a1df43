// Package rolecfg is the contract between the agent and the role processes
// it starts (gtraind master|pserver|trainer):
//
//   - Args, the one description of a role's command line: the agent writes
//     it (Args.Argv) and the role reads it back (Flags, Parse),
//     so a flag cannot be written under one name and read under another;
//   - the etcd and TLS flags that gtraind agent and the roles both take,
//     declared once (AddAccessFlags);
//   - Common, the settings every role's Config embeds (master.Config,
//     pserver.Config, trainer.Config);
//   - the roots a job's paths are opened beneath (JobRoots, Common.Roots):
//     the agent's --allowed-path, which travels on the role's command line,
//     its data dir and the job's own directories. Building them resolves
//     the allowed paths' symlinks (confine.NewRoots), its only file access.
//
// It must not know how a role runs, read files, dial etcd or import the
// daemon or the roles.
package rolecfg
