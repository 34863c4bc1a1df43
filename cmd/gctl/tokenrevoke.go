package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/cmd/gctl/internal/render"
)

func (a *app) tokenCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Revoke bearer tokens",
	}
	asGroup(cmd)
	cmd.AddCommand(a.tokenRevokeCommand())
	return cmd
}

func (a *app) tokenRevokeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a bearer token on every agent (admin)",
		Long: `Put the bearer token with id ID (shown by ` + "`gtraind cert issue --client`" + `) on the
cluster's deny-list (admin only): every agent watches the list and refuses the
token within seconds. The entry is kept until every token with that id has
expired (the agent's --token-max-lifetime from now). Revoking a token does not
revoke the client certificate issued with it.
With -o json: {"id", "until", "by"}.`,
		Example: "  gctl token revoke 3f9c2a1b7d5e4f60a8b9c0d1e2f30415",
		Args:    exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			client, s, done, err := a.connect()
			if err != nil {
				return err
			}
			defer done()
			doc, err := call(cmd.Context(), s, "revoke token "+args[0], func(ctx context.Context) (*api.Document, error) {
				return client.RevokeToken(ctx, &api.RevokeTokenRequest{Id: args[0]})
			})
			if err != nil {
				return err
			}
			row, err := decodeDocument[api.RevokedTokenRow](doc, "revoked token")
			if err != nil {
				return err
			}
			if a.output == render.OutputJSON {
				return render.WriteJSON(a.stdout, row)
			}
			_, err = fmt.Fprintf(a.stdout, "revoked token %s (on the deny-list until %s)\n", row.ID, row.Until.Format(time.RFC3339))
			return err
		},
	}
}
