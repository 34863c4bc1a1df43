package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/auth"
	"github.com/gtrain/gtrain/internal/testing/e2erig"
	"github.com/gtrain/gtrain/internal/testing/specyaml"
	"github.com/gtrain/gtrain/internal/testing/wait"
	"github.com/gtrain/gtrain/jobspec"
	"github.com/gtrain/gtrain/pki"
)

// TestTLSCredentialsRevokeAndRotate (issue 19 item 4), on one two-host TLS
// cluster while a job trains: a bearer token an admin revokes with `gctl
// token revoke` is refused by both agents within 5 s, the user's other
// credentials still work; then host 1's node certificate files are replaced
// by a new certificate of the same CA, and a new connection to its agent
// is served the new certificate while the job keeps training to SUCCEEDED
// with no role restarted.
func TestTLSCredentialsRevokeAndRotate(t *testing.T) {
	hc := startTLSCluster(t)
	certs := filepath.Join(hc.Dir, "pki")
	spec := filepath.Join(hc.Shared, "creds.yaml")
	if err := os.WriteFile(spec, []byte(specyaml.Marshal(fitALineJob("creds", jobspec.ModeSync, 40, filepath.Join(hc.Shared, "data")))), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := hc.GctlOn(t, 0, "job", "start", "-f", spec, "--detach"); code != 0 {
		t.Fatalf("job start: exit %d: %s", code, errs)
	}
	e2erig.WaitJob(t, hc.On(0), "creds", "the job training", 60*time.Second, func(st api.JobStatus) bool { return st.Step > 0 })

	assertRevokedEverywhere(t, hc, certs)
	assertNodeCertRotated(t, hc, certs, 1)

	st := e2erig.WaitJob(t, hc.On(0), "creds", "the job to finish", 90*time.Second, e2erig.Succeeded)
	if st.Master.Restarts != 0 {
		t.Errorf("the master restarted %d times during the rotation", st.Master.Restarts)
	}
}

// assertRevokedEverywhere: carl's token works on both agents until an
// admin revokes it, then both refuse it within 5 s.
func assertRevokedEverywhere(t *testing.T, hc *e2erig.HostCluster, certs string) {
	t.Helper()
	e2erig.CertCmd(t, "issue", "--dir", certs, "--client", "carl", "--role", "operator")
	e2erig.CertCmd(t, "issue", "--dir", certs, "--client", "root", "--role", "admin")
	raw, err := os.ReadFile(filepath.Join(certs, "carl.token"))
	if err != nil {
		t.Fatal(err)
	}
	ca, err := auth.ReadCertificate(filepath.Join(certs, pki.CACertFile))
	if err != nil {
		t.Fatal(err)
	}
	carl, err := auth.VerifyToken(ca, strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	good := hc.GctlConfig
	defer func() { hc.GctlConfig = good }()
	tokenConf := filepath.Join(hc.Dir, "carl.yaml")
	conf := fmt.Sprintf("current-context: c\ncontexts:\n  - name: c\n    endpoint: 127.0.0.1:1\n    tls: {ca: %s}\n    token_file: %s\n",
		filepath.Join(certs, pki.CACertFile), filepath.Join(certs, "carl.token"))
	if err := os.WriteFile(tokenConf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	hc.GctlConfig = tokenConf
	for i := range hc.Hosts {
		if _, errs, code := hc.GctlOn(t, i, "node", "list"); code != 0 {
			t.Fatalf("carl's token on host %d before the revocation: exit %d: %s", i, code, errs)
		}
	}
	hc.GctlConfig = e2erig.GctlConfig(t, hc.Dir, "root", certs, "root")
	if out, errs, code := hc.GctlOn(t, 0, "token", "revoke", carl.TokenID); code != 0 || !strings.Contains(out, "revoked token "+carl.TokenID) {
		t.Fatalf("token revoke: exit %d: %s %s", code, out, errs)
	}
	hc.GctlConfig = tokenConf
	for i := range hc.Hosts {
		wait.Eventually(t, 5*time.Second, fmt.Sprintf("host %d refuses the revoked token", i), func() (bool, string) {
			_, errs, code := hc.GctlOn(t, i, "node", "list")
			return code == 1 && strings.Contains(errs, "revoked"), fmt.Sprintf("exit %d: %s", code, errs)
		})
	}
	hc.GctlConfig = good // alice's certificate still works
	if _, errs, code := hc.GctlOn(t, 1, "node", "list"); code != 0 {
		t.Errorf("alice after carl's revocation: exit %d: %s", code, errs)
	}
}

// assertNodeCertRotated replaces host i's node certificate files and
// checks that a new connection is served the new certificate.
func assertNodeCertRotated(t *testing.T, hc *e2erig.HostCluster, certs string, i int) {
	t.Helper()
	h := hc.Hosts[i]
	before := servedSerial(t, hc, certs, h.Agent.API)
	e2erig.CertCmd(t, "issue", "--dir", certs, "--node", h.Name, "--addr", h.IP, "--force")
	next, err := auth.ReadCertificate(pki.CertPath(certs, h.Name))
	if err != nil {
		t.Fatal(err)
	}
	if next.SerialNumber.String() == before {
		t.Fatalf("the reissued certificate has the old serial %s", before)
	}
	if got := servedSerial(t, hc, certs, h.Agent.API); got != next.SerialNumber.String() {
		t.Errorf("host %d serves certificate %s after the rotation, want the new %s (the old was %s)", i, got, next.SerialNumber, before)
	}
}

// servedSerial is the serial number of the certificate the agent at addr
// presents to a new connection (alice's client certificate).
func servedSerial(t *testing.T, hc *e2erig.HostCluster, certs, addr string) string {
	t.Helper()
	f := pki.Files{CA: filepath.Join(certs, pki.CACertFile), Cert: pki.CertPath(certs, "alice"), Key: pki.KeyPath(certs, "alice")}
	creds, err := f.ClientCreds()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds), hc.GRPCDialer())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var p peer.Peer
	if _, err := api.NewControlClient(conn).ListNodes(ctx, &api.ListNodesRequest{}, grpc.Peer(&p)); err != nil {
		t.Fatalf("list nodes at %s: %v", addr, err)
	}
	ti, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(ti.State.PeerCertificates) == 0 {
		t.Fatalf("no TLS peer certificate from %s: %+v", addr, p.AuthInfo)
	}
	return ti.State.PeerCertificates[0].SerialNumber.String()
}
