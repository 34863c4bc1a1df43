package daemon

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/gtrain/gtrain/api"
)

// Quotas: only an admin sets one (audited, refusals included); a user reads
// its own, an admin anyone's; a user nobody set a quota for has no limit.
func TestQuotaAuthorization(t *testing.T) {
	t.Parallel()
	c := startAuthzCluster(t)
	ctx := context.Background()
	alice, bob, root := c.client(t, "alice", "viewer"), c.client(t, "bob", "operator"), c.client(t, "root", "admin")
	cpu, jobs := 2.0, int32(1)

	_, err := bob.SetQuota(ctx, &api.SetQuotaRequest{User: "bob", Cpu: &cpu})
	assertStatus(t, "bob sets his quota", err, codes.PermissionDenied, "bob (operator) may not set quotas: needs admin")
	var row api.QuotaRow
	getDoc(t, "root sets bob's quota", func() (*api.Document, error) {
		return root.SetQuota(ctx, &api.SetQuotaRequest{User: "bob", Cpu: &cpu, Jobs: &jobs})
	}, &row)
	if row.User != "bob" || row.CPU == nil || *row.CPU != 2 || row.Jobs == nil || *row.Jobs != 1 || row.Memory != nil || row.GPUs != nil {
		t.Errorf("root set bob's quota: answer %+v, want cpu 2, jobs 1, no memory or gpu limit", row)
	}
	neg := -1.0
	_, err = root.SetQuota(ctx, &api.SetQuotaRequest{User: "bob", Cpu: &neg})
	assertStatus(t, "negative cpu", err, codes.InvalidArgument, "--cpu -1")

	row = api.QuotaRow{}
	getDoc(t, "bob reads his own", func() (*api.Document, error) { return bob.GetQuota(ctx, &api.QuotaRequest{}) }, &row)
	if row.User != "bob" || row.CPU == nil || *row.CPU != 2 || row.JobsUsed != 0 {
		t.Errorf("bob's own quota %+v, want cpu 2 and nothing used", row)
	}
	_, err = bob.GetQuota(ctx, &api.QuotaRequest{User: "alice"})
	assertStatus(t, "bob reads alice's", err, codes.PermissionDenied, "bob (operator) may not read the quota of user alice")
	row = api.QuotaRow{}
	getDoc(t, "alice reads her own", func() (*api.Document, error) { return alice.GetQuota(ctx, &api.QuotaRequest{User: "alice"}) }, &row)
	if row.User != "alice" || row.CPU != nil || row.Jobs != nil {
		t.Errorf("alice's quota %+v, want no limits", row)
	}
	getDoc(t, "root reads bob's", func() (*api.Document, error) { return root.GetQuota(ctx, &api.QuotaRequest{User: "bob"}) }, &row)

	for _, a := range [][5]string{
		{"bob", "operator", "quota-set", "bob", "PermissionDenied"},
		{"root", "admin", "quota-set", "bob", "ok"},
		{"root", "admin", "quota-set", "bob", "InvalidArgument"},
	} {
		if !hasAudit(c.log, a[0], a[1], a[2], a[3], a[4]) {
			t.Errorf("no audit line who=%s role=%s action=%s target=%s result=%s", a[0], a[1], a[2], a[3], a[4])
		}
	}
}
