package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/gtrain/gtrain/api"
)

func (a *app) nodeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Inspect the cluster's nodes",
	}
	asGroup(cmd)
	cmd.AddCommand(a.nodeListCommand())
	return cmd
}

func (a *app) nodeListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the nodes: NAME ADDR STATE CPU MEMORY ROLES",
		Long: `List every node (gtraind agent) of the cluster, one row each. STATE is ready,
down or draining; ROLES are the job processes running there.
With -o json: an array of objects keyed name, addr, state, cpu, memory (bytes), roles.`,
		Example: "  gctl node list\n  gctl node list -o json",
		Args:    exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listRows(cmd.Context(), a, "list nodes", "node list",
				func(ctx context.Context, c api.ControlClient) (*api.Document, error) {
					return c.ListNodes(ctx, &api.ListNodesRequest{})
				},
				func(rows []api.NodeRow) error { return writeNodeTable(a.stdout, rows) })
		},
	}
}
