package daemon

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/auth"
	"github.com/gtrain/gtrain/internal/testing/wait"
)

// An admin revokes a token through the API: the agent refuses it within
// seconds and keeps accepting the user's other tokens; an operator may not
// revoke; the revocation is audited.
func TestTokenRevocation(t *testing.T) {
	t.Parallel()
	c := startAuthzCluster(t)
	tokenOnly := dialTLS(t, c.tls, c.pki.ClientTLS())
	admin := c.client(t, "root", "admin")
	sign := func() auth.Token {
		tok, err := auth.SignToken(c.pki.Key, "dave", auth.Operator, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	leaked, other := sign(), sign()
	ctx := context.Background()
	if _, err := tokenOnly.ListJobs(withToken(leaked.Raw), &api.ListJobsRequest{}); err != nil {
		t.Fatalf("the token before its revocation: %v", err)
	}
	_, err := tokenOnly.RevokeToken(withToken(other.Raw), &api.RevokeTokenRequest{Id: leaked.ID})
	assertStatus(t, "an operator revokes", err, codes.PermissionDenied, "may not revoke tokens: needs admin")
	_, err = admin.RevokeToken(ctx, &api.RevokeTokenRequest{Id: "../x"})
	assertStatus(t, "a bad id", err, codes.InvalidArgument, "token id")

	if _, err := admin.RevokeToken(ctx, &api.RevokeTokenRequest{Id: leaked.ID}); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	wait.Eventually(t, 5*time.Second, "the revoked token is refused", func() (bool, string) {
		_, err := tokenOnly.ListJobs(withToken(leaked.Raw), &api.ListJobsRequest{})
		return status.Code(err) == codes.Unauthenticated, status.Convert(err).Message()
	})
	_, err = tokenOnly.ListJobs(withToken(leaked.Raw), &api.ListJobsRequest{})
	assertStatus(t, "the revoked token", err, codes.Unauthenticated, "revoked", leaked.ID)
	if _, err := tokenOnly.ListJobs(withToken(other.Raw), &api.ListJobsRequest{}); err != nil {
		t.Errorf("dave's other token: %v", err)
	}
	if !hasAudit(c.log, "root", "admin", "token-revoke", leaked.ID, "ok") {
		t.Errorf("no audit line of the revocation")
	}
}

// A TLS agent publishes when its node certificate expires (gctl node list
// warns 14 days before).
func TestNodeCertExpiryPublished(t *testing.T) {
	t.Parallel()
	c := startAuthzCluster(t)
	admin := c.client(t, "root", "admin")
	leaf, err := c.agent.cfg.TLS.Leaf()
	if err != nil {
		t.Fatal(err)
	}
	var nodes []api.NodeRow
	getDoc(t, "list nodes", func() (*api.Document, error) { return admin.ListNodes(context.Background(), &api.ListNodesRequest{}) }, &nodes)
	if len(nodes) != 1 || nodes[0].CertNotAfter == nil || !nodes[0].CertNotAfter.Equal(leaf.NotAfter) {
		t.Errorf("nodes %+v: want cert_not_after %s", nodes, leaf.NotAfter)
	}
}
