package daemon

import (
	"context"
	"slices"

	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/auth"
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/coord/schema"
	"github.com/gtrain/gtrain/daemon/controlapi"
	"github.com/gtrain/gtrain/internal/testing/testpki"
)

// Callers identified by client certificates over mutual TLS, each allowed
// what its role allows, against a real agent's etcd.
func TestAuthorizationByCertificate(t *testing.T) {
	t.Parallel()
	c := startAuthzCluster(t)
	ctx := context.Background()
	alice, bob, carol := c.client(t, "alice", "viewer"), c.client(t, "bob", "operator"), c.client(t, "carol", "operator")
	root, node := c.client(t, "root", "admin"), c.client(t, "node-b", "node")

	for _, job := range []struct {
		who  api.ControlClient
		name string
	}{{bob, "sleep-bob"}, {carol, "sleep-carol"}} {
		if err := submitAs(t, ctx, job.who, job.name); err != nil {
			t.Fatalf("submit %s: %v", job.name, err)
		}
	}
	if !c.hasEvent(t, "sleep-bob", "job submitted by bob (operator) via node-a") {
		t.Errorf("no submit event naming bob in %v", events(t, etcdClient(t, c.agent.cfg.EtcdEndpoints[0]), "sleep-bob"))
	}
	rec, _, err := coord.GetJobRecord(ctx, etcdClient(t, c.agent.cfg.EtcdEndpoints[0]), "sleep-bob")
	if err != nil || rec.Submitter == nil || *rec.Submitter != (schema.Submitter{Name: "bob", Role: "operator"}) {
		t.Errorf("sleep-bob record submitter %+v, %v", rec.Submitter, err)
	}

	// A viewer reads but changes nothing.
	var rows []api.JobRow
	getDoc(t, "alice lists jobs", func() (*api.Document, error) { return alice.ListJobs(ctx, &api.ListJobsRequest{}) }, &rows)
	if len(rows) != 2 {
		t.Errorf("alice sees %d jobs, want 2", len(rows))
	}
	_, err = alice.StopJob(ctx, &api.StopJobRequest{Name: "sleep-bob"})
	assertStatus(t, "alice stops", err, codes.PermissionDenied, "alice (viewer) may not stop jobs: needs operator")
	assertStatus(t, "alice submits", submitAs(t, ctx, alice, "sleep-alice"), codes.PermissionDenied, "needs operator")

	// An operator stops its own jobs only, and purges none.
	_, err = bob.StopJob(ctx, &api.StopJobRequest{Name: "sleep-carol"})
	assertStatus(t, "bob stops carol's job", err, codes.PermissionDenied, "bob (operator) may not stop job sleep-carol", "carol (operator)", "needs admin")
	if _, err := bob.StopJob(ctx, &api.StopJobRequest{Name: "sleep-bob"}); err != nil {
		t.Fatalf("bob stops his job: %v", err)
	}
	if !c.hasEvent(t, "sleep-bob", "job stopped by bob (operator) via node-a") {
		t.Errorf("no stop event naming bob")
	}
	_, err = bob.StopJob(ctx, &api.StopJobRequest{Name: "sleep-bob", Purge: true})
	assertStatus(t, "bob purges", err, codes.PermissionDenied, "bob (operator) may not purge jobs: needs admin")
	_, err = bob.DrainNode(ctx, &api.NodeRequest{Name: "node-a"})
	assertStatus(t, "bob drains", err, codes.PermissionDenied, "bob (operator) may not drain nodes: needs admin")

	// An admin drains and purges anyone's job; a node's certificate only
	// relays logs and models: it changes nothing and lists no jobs.
	if _, err := root.DrainNode(ctx, &api.NodeRequest{Name: "node-a"}); err != nil {
		t.Fatalf("root drains: %v", err)
	}
	_, err = node.UndrainNode(ctx, &api.NodeRequest{Name: "node-a"})
	assertStatus(t, "node-b undrains", err, codes.PermissionDenied, "node-b (node) may not undrain nodes: a node's certificate only relays logs and models")
	_, err = node.ListJobs(ctx, &api.ListJobsRequest{})
	assertStatus(t, "node-b lists jobs", err, codes.PermissionDenied, "node-b (node) may not list jobs")
	logs, err := node.Logs(ctx, &api.LogsRequest{Job: "sleep-bob", Local: true})
	if err == nil {
		_, err = logs.Recv()
	}
	if status.Code(err) == codes.PermissionDenied {
		t.Errorf("node-b relays logs: %v, want it allowed", err)
	}
	if _, err := root.UndrainNode(ctx, &api.NodeRequest{Name: "node-a"}); err != nil {
		t.Fatalf("root undrains: %v", err)
	}
	if _, err := root.StopJob(ctx, &api.StopJobRequest{Name: "sleep-carol", Purge: true}); err != nil {
		t.Fatalf("root purges carol's job: %v", err)
	}

	for _, a := range [][5]string{
		{"bob", "operator", "start", "sleep-bob", "ok"},
		{"bob", "operator", "stop", "sleep-bob", "ok"},
		{"alice", "viewer", "stop", "sleep-bob", "PermissionDenied"},
		{"alice", "viewer", "start", "sleep-alice", "PermissionDenied"},
		{"bob", "operator", "stop", "sleep-carol", "PermissionDenied"},
		{"root", "admin", "drain", "node-a", "ok"},
		{"node-b", "node", "undrain", "node-a", "PermissionDenied"},
		{"root", "admin", "undrain", "node-a", "ok"},
		{"root", "admin", "purge", "sleep-carol", "ok"},
	} {
		if !hasAudit(c.log, a[0], a[1], a[2], a[3], a[4]) {
			t.Errorf("no audit line who=%s role=%s action=%s target=%s result=%s", a[0], a[1], a[2], a[3], a[4])
		}
	}
}

// Without a certificate: a bearer token signed by the CA works over TLS and
// on the agent itself; nothing, or a token of another CA, is refused.
func TestAuthorizationByToken(t *testing.T) {
	t.Parallel()
	c := startAuthzCluster(t)
	tokenOnly := dialTLS(t, c.tls, c.pki.ClientTLS())
	dave := withToken(mustToken(t, c.pki, "dave", auth.Operator))

	_, err := tokenOnly.ListJobs(context.Background(), &api.ListJobsRequest{})
	assertStatus(t, "no credentials", err, codes.Unauthenticated, controlapi.MsgNoCredentials)
	logs, err := tokenOnly.Logs(context.Background(), &api.LogsRequest{Job: "x"})
	if err == nil {
		_, err = logs.Recv()
	}
	assertStatus(t, "logs without credentials", err, codes.Unauthenticated, controlapi.MsgNoCredentials)
	other := testpki.New(t)
	_, err = tokenOnly.ListJobs(withToken(mustToken(t, other, "mallory", auth.Admin)), &api.ListJobsRequest{})
	assertStatus(t, "token of another CA", err, codes.Unauthenticated, "invalid bearer token")

	if err := submitAs(t, dave, tokenOnly, "sleep-dave"); err != nil {
		t.Fatalf("dave submits with a token: %v", err)
	}
	if !c.hasEvent(t, "sleep-dave", "job submitted by dave (operator) via node-a") {
		t.Errorf("no submit event naming dave")
	}
	if _, err := tokenOnly.StopJob(dave, &api.StopJobRequest{Name: "sleep-dave"}); err != nil {
		t.Errorf("dave stops his job: %v", err)
	}

	// A plaintext client does not get through the TLS handshake at all.
	if _, err = c.agent.client.ListNodes(context.Background(), &api.ListNodesRequest{}); status.Code(err) != codes.Unavailable {
		t.Errorf("plaintext client of a TLS agent: %v, want Unavailable", err)
	}
	eve := withToken(mustToken(t, c.pki, "eve", auth.Viewer))
	if _, err := tokenOnly.ListNodes(eve, &api.ListNodesRequest{}); err != nil {
		t.Errorf("eve lists nodes with a token: %v", err)
	}
	_, err = tokenOnly.StopJob(eve, &api.StopJobRequest{Name: "sleep-dave"})
	assertStatus(t, "eve stops", err, codes.PermissionDenied, "eve (viewer) may not stop jobs: needs operator")
	if !hasAudit(c.log, "dave", "operator", "stop", "sleep-dave", "ok") {
		t.Errorf("no audit line of dave's stop")
	}
}

// An agent without TLS takes every caller for an anonymous admin, and says
// so in events and audit lines.
func TestAuthorizationAnonymousWithoutTLS(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, "node-a", startEtcd(t))
	log := captureLog(t, &cfg)
	a := startAgent(t, cfg)
	ctx := context.Background()
	if err := submitAs(t, ctx, a.client, "sleep-anon"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.client.DrainNode(ctx, &api.NodeRequest{Name: "node-a"}); err != nil {
		t.Fatalf("drain: %v", err)
	}
	if _, err := a.client.StopJob(ctx, &api.StopJobRequest{Name: "sleep-anon"}); err != nil {
		t.Fatalf("stop: %v", err)
	}
	evs := events(t, etcdClient(t, cfg.EtcdEndpoints[0]), "sleep-anon")
	for _, want := range []string{"job submitted by anonymous via node-a", "job stopped by anonymous via node-a"} {
		if !slices.Contains(evs, want) {
			t.Errorf("events %q lack %q", evs, want)
		}
	}
	if !hasAudit(log, "anonymous", "admin", "drain", "node-a", "ok") {
		t.Errorf("no audit line of the anonymous drain")
	}
}
