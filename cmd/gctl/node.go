package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/cmd/gctl/internal/render"
)

func (a *app) nodeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Inspect the cluster's nodes, drain and undrain them",
	}
	asGroup(cmd)
	cmd.AddCommand(a.nodeListCommand(), a.nodeDrainCommand(), a.nodeUndrainCommand())
	return cmd
}

func (a *app) nodeListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the nodes: NAME ADDR STATE CPU MEMORY GPUS ROLES",
		Long: `List every node (gtraind agent) that joined the cluster, one row each. STATE is
ready, down (its agent died or stopped: it stays listed) or draining; CPU and
MEMORY are what the node offers to placement; GPUS are its GPUs held by placed
workers and offered (1/2); ROLES are the job processes placed there.
With -o json: an array of objects keyed name, addr, state, cpu, memory (bytes),
gpus, cpu_used, memory_used, gpus_used, labels, roles, devices (which worker
holds each GPU), cert_not_after (when its node certificate expires; null
without TLS). A node whose certificate expires within 14 days gets a warning
on stderr.`,
		Example: "  gctl node list\n  gctl node list -o json",
		Args:    exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listRows(cmd.Context(), a, "list nodes", "node list",
				func(ctx context.Context, c api.ControlClient) (*api.Document, error) {
					return c.ListNodes(ctx, &api.ListNodesRequest{})
				},
				func(rows []api.NodeRow) error {
					for _, w := range certWarnings(rows, time.Now()) {
						fmt.Fprintf(a.stderr, "warning: %s\n", w)
					}
					return render.WriteNodeTable(a.stdout, rows)
				})
		},
	}
}

func (a *app) nodeDrainCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "drain NAME",
		Short: "Move a node's roles to other nodes and place nothing new there",
		Long: `Mark the node draining: the cluster's scheduler moves the roles placed on it to
other nodes with room, and places nothing new there until ` + "`gctl node undrain`" + `.
A moved pserver restarts on its new node from the job's newest complete global
checkpoint, and the job rolls back to that step: steps are redone, none is lost.
A job without checkpoint.dir keeps its checkpoints on the node's own disk and
stays (its status says so). ` + "`gctl node list`" + ` shows when no role is left.
With -o json: the node's row of ` + "`gctl node list -o json`" + `.`,
		Example: "  gctl node drain n2",
		Args:    exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.changeNode(cmd.Context(), "drain", args[0], func(ctx context.Context, c api.ControlClient) (*api.Document, error) {
				return c.DrainNode(ctx, &api.NodeRequest{Name: args[0]})
			})
		},
	}
}

func (a *app) nodeUndrainCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "undrain NAME",
		Short: "End a drain: the node takes new work again",
		Long: `End the drain of the node: the scheduler places new work on it again. Roles that
moved away stay where they are.
With -o json: the node's row of ` + "`gctl node list -o json`" + `.`,
		Example: "  gctl node undrain n2",
		Args:    exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.changeNode(cmd.Context(), "undrain", args[0], func(ctx context.Context, c api.ControlClient) (*api.Document, error) {
				return c.UndrainNode(ctx, &api.NodeRequest{Name: args[0]})
			})
		},
	}
}

// changeNode drains or undrains node and prints its row.
func (a *app) changeNode(ctx context.Context, verb, node string, change func(context.Context, api.ControlClient) (*api.Document, error)) error {
	client, s, done, err := a.connect()
	if err != nil {
		return err
	}
	defer done()
	doc, err := call(ctx, s, verb+" node "+node, func(ctx context.Context) (*api.Document, error) { return change(ctx, client) })
	if err != nil {
		return err
	}
	row, err := decodeDocument[api.NodeRow](doc, "node")
	if err != nil {
		return err
	}
	if a.output == render.OutputJSON {
		return render.WriteJSON(a.stdout, row)
	}
	switch {
	case verb == "undrain":
		fmt.Fprintf(a.stdout, "node %s is %s: it takes new work again\n", row.Name, row.State)
	case len(row.Roles) == 0:
		fmt.Fprintf(a.stdout, "node %s is %s and runs no role\n", row.Name, row.State)
	default:
		fmt.Fprintf(a.stdout, "node %s is %s: its roles (%s) move to other nodes; `gctl node list` shows when none is left\n",
			row.Name, row.State, strings.Join(row.Roles, ", "))
	}
	return nil
}

// certWarnings name the nodes whose certificate has expired or expires
// within api.CertWarnBefore of now, and what to do.
func certWarnings(rows []api.NodeRow, now time.Time) []string {
	var out []string
	for _, r := range rows {
		if r.CertNotAfter == nil || r.CertNotAfter.Sub(now) > api.CertWarnBefore {
			continue
		}
		when := "expired on"
		if r.CertNotAfter.After(now) {
			when = fmt.Sprintf("expires in %d days, on", int(r.CertNotAfter.Sub(now).Hours()/24))
		}
		out = append(out, fmt.Sprintf("node %s: its certificate %s %s; issue a new one (gtraind cert issue --node %s --addr ... --force) and replace its --tls-cert/--tls-key files: the agent picks them up without a restart",
			r.Name, when, r.CertNotAfter.UTC().Format(time.RFC3339), r.Name))
	}
	return out
}
