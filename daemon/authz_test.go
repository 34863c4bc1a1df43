package daemon

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"log/slog"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/auth"
	"github.com/gtrain/gtrain/internal/testing/logcheck"
	"github.com/gtrain/gtrain/internal/testing/testpki"
	gpki "github.com/gtrain/gtrain/pki"
)

// captureLog points cfg's log at a buffer (still checked by logcheck).
func captureLog(t *testing.T, cfg *Config) *logcheck.Buffer {
	b := &logcheck.Buffer{}
	// With the attribute gtraind's logger adds, so that logcheck finds a
	// line that names it again.
	cfg.Log = logcheck.Logger(t, slog.NewJSONHandler(b, nil)).With("role", "agent")
	return b
}

// hasAudit reports whether an "audit" line has exactly these attributes.
func hasAudit(b *logcheck.Buffer, who, role, action, target, result string) bool {
	for _, line := range bytes.Split([]byte(b.String()), []byte("\n")) {
		var r map[string]any
		if json.Unmarshal(line, &r) != nil || r["msg"] != "audit" || r["level"] != "INFO" {
			continue
		}
		if r["who"] == who && r["who_role"] == role && r["action"] == action && r["target"] == target && r["result"] == result {
			return true
		}
	}
	return false
}

func dialTLS(t *testing.T, addr string, conf *tls.Config) api.ControlClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(conf)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return api.NewControlClient(conn)
}

// withToken is ctx carrying token as gctl sends it.
func withToken(token string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
}

func mustToken(t *testing.T, pki *testpki.CA, name string, role auth.Role) string {
	t.Helper()
	tok, err := auth.SignToken(pki.Key, name, role, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return tok.Raw
}

// submitAs submits a sleeping job as the caller of client and ctx.
func submitAs(t *testing.T, ctx context.Context, client api.ControlClient, name string) error {
	t.Helper()
	train, test := writeShards(t, t.TempDir())
	_, err := client.SubmitJob(ctx, &api.SubmitJobRequest{SpecJson: specJSON(t, name, train, test, 1, 1, nil)})
	return err
}

// authzCluster is an agent whose API serves mutual TLS and needs
// credentials.
type authzCluster struct {
	pki   *testpki.CA
	agent *testAgent
	tls   string // address of the agent's API
	log   *logcheck.Buffer
}

func startAuthzCluster(t *testing.T) *authzCluster {
	t.Helper()
	pki := testpki.New(t)
	cfg := testConfig(t, "node-a", startEtcd(t))
	cert, key := pki.WriteNode(t, cfg.NodeName)
	cfg.TLS = gpki.Files{CA: pki.File, Cert: cert, Key: key}
	log := captureLog(t, &cfg)
	a := startAgent(t, cfg)
	return &authzCluster{pki: pki, agent: a, tls: a.addr, log: log}
}

func (c *authzCluster) client(t *testing.T, name, ou string) api.ControlClient {
	return dialTLS(t, c.tls, c.pki.ClientTLS(c.pki.Issue(t, name, ou)))
}

// hasEvent reports whether one of job's events says what.
func (c *authzCluster) hasEvent(t *testing.T, job, what string) bool {
	t.Helper()
	return slices.Contains(events(t, etcdClient(t, c.agent.cfg.EtcdEndpoints[0]), job), what)
}
