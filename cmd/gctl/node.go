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
			client, s, done, err := a.connect()
			if err != nil {
				return err
			}
			defer done()
			doc, err := call(cmd.Context(), s, "list nodes", func(ctx context.Context) (*api.Document, error) {
				return client.ListNodes(ctx, &api.ListNodesRequest{})
			})
			if err != nil {
				return err
			}
			rows, err := decodeDocument[[]api.NodeRow](doc, "node list")
			if err != nil {
				return err
			}
			if a.output == outputJSON {
				return writeJSON(a.stdout, nonNil(rows))
			}
			return writeNodeTable(a.stdout, rows)
		},
	}
}
