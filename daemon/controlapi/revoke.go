package controlapi

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/auth"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
)

// RevokeToken puts a token id on the deny-list (admin only: controlRules).
// The entry is kept for this agent's maximum token lifetime, past which
// every token with the id has expired anyway; each agent's watch
// (coord.Revocations) refuses the token within seconds.
func (c *Server) RevokeToken(ctx context.Context, req *api.RevokeTokenRequest) (*api.Document, error) {
	id := req.GetId()
	if !auth.TokenIDOK(id) {
		return nil, status.Errorf(codes.InvalidArgument,
			"token id %q: want the id `gtraind cert issue --client` showed (letters, digits, '-', '_')", id)
	}
	life := c.tokenMaxLifetime
	if life <= 0 {
		life = auth.DefaultMaxLifetime
	}
	now := c.clock.Now().UTC()
	rec := schema.RevokedToken{ID: id, Until: now.Add(life + tokenClockSkew), By: caller(ctx).String(), At: now}
	if err := coord.RevokeToken(ctx, c.cli, rec, now); err != nil {
		return nil, etcdUnavailable("revoke token "+id, err)
	}
	c.log.Info("token revoked", "id", id, "by", rec.By, "until", rec.Until)
	return document(api.RevokedTokenRow{ID: id, Until: rec.Until, By: rec.By})
}

// tokenClockSkew covers tokens issued on a host whose clock is ahead.
const tokenClockSkew = 5 * time.Minute

// LoadRevocations reads the deny-list; the agent calls it before serving,
// so that no token is checked against an unread list (which refuses all).
func (c *Server) LoadRevocations(ctx context.Context) error {
	if err := c.revoked.Load(ctx); err != nil {
		return fmt.Errorf("%w; is etcd reachable?", err)
	}
	return nil
}

// WatchRevocations keeps the deny-list current until ctx ends.
func (c *Server) WatchRevocations(ctx context.Context) { c.revoked.Run(ctx) }
