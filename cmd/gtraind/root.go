package main

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"
)

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "gtraind",
		Short: "gtrain node daemon and role processes",
		Long: `gtraind runs on every node of a gtrain cluster.

  gtraind agent     the long-running node daemon (systemd unit in deploy/): registers the
                    node in etcd, gossips with its peers, serves the API gctl talks to and
                    starts and supervises the role processes of jobs placed on the node.
  gtraind master    one job's master (normally started by the agent)
  gtraind pserver   one parameter-server shard of a job (normally started by the agent)
  gtraind trainer   one trainer of a job (normally started by the agent)

The role subcommands exist so an operator can run a role by hand against an etcd for
debugging, as Fluid's TRAINING_ROLE split allowed.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w: %v (see %s --help)", errUsage, err, c.CommandPath())
	})
	root.AddCommand(newAgentCmd(), newCertCmd(), newRoleCmd("master"), newRoleCmd("pserver"), newRoleCmd("trainer"))
	return root
}

func newLogger(w io.Writer, role string) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo})).With("role", role)
}
