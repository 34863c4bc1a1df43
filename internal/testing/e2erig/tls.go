package e2erig

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gtrain/gtrain/api"
	"github.com/gtrain/gtrain/pki"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// AssertRolesChecked: a viewer's certificate cannot stop the running job
// (exit 1, the role needed named); a client with the CA but neither a
// certificate nor a token is refused; the operator's bearer token from
// `gtraind cert issue` works in a context without certificates.
func (hc *HostCluster) AssertRolesChecked(t *testing.T, job string) {
	t.Helper()
	certs := filepath.Join(hc.Dir, "pki")
	CertCmd(t, "issue", "--dir", certs, "--client", "bob", "--role", "viewer")
	good := hc.GctlConfig
	defer func() { hc.GctlConfig = good }()
	hc.GctlConfig = GctlConfig(t, hc.Dir, "bob", certs, "bob")
	if _, errs, code := hc.GctlOn(t, 0, "job", "stop", job); code != 1 || !strings.Contains(errs, "bob (viewer) may not stop jobs: needs operator") {
		t.Errorf("a viewer stops the job: exit %d, %q; want exit 1 naming the operator role", code, errs)
	}
	if _, errs, code := hc.GctlOn(t, 0, "job", "status", job); code != 0 {
		t.Errorf("a viewer reads the job's status: exit %d: %s", code, errs)
	}
	for name, extra := range map[string]string{
		"no certificate, no token": "",
		"alice's token":            fmt.Sprintf("    token_file: %s\n", filepath.Join(certs, "alice.token")),
	} {
		hc.GctlConfig = filepath.Join(hc.Dir, "notcert.yaml")
		conf := fmt.Sprintf("current-context: c\ncontexts:\n  - name: c\n    endpoint: 127.0.0.1:1\n    tls: {ca: %s}\n%s",
			filepath.Join(certs, pki.CACertFile), extra)
		if err := os.WriteFile(hc.GctlConfig, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		_, errs, code := hc.GctlOn(t, 0, "node", "list")
		switch {
		case extra == "" && (code != 1 || !strings.Contains(errs, "client certificate or a bearer token")):
			t.Errorf("gctl with %s: exit %d, %q; want exit 1 asking for a certificate or token", name, code, errs)
		case extra != "" && code != 0:
			t.Errorf("gctl with %s: exit %d: %s", name, code, errs)
		}
	}
}

// CertCmd runs `gtraind cert ARGS`.
func CertCmd(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(filepath.Join(BinDir, "gtraind"), append([]string{"cert"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("gtraind cert %v: %v\n%s", args, err, out)
	}
}

// GctlConfig writes a gctl config whose context uses the client
// certificate name of the CA in certs; it returns its path.
func GctlConfig(t *testing.T, dir, file, certs, name string) string {
	t.Helper()
	path := filepath.Join(dir, file+".yaml")
	conf := fmt.Sprintf("current-context: c\ncontexts:\n  - name: c\n    endpoint: 127.0.0.1:1\n    tls: {ca: %s, cert: %s, key: %s}\n",
		filepath.Join(certs, pki.CACertFile), pki.CertPath(certs, name), pki.KeyPath(certs, name))
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// AssertPserverTLS: a pserver of the job refuses a plaintext client and
// answers one with a certificate of the cluster, verified by its address.
func (hc *HostCluster) AssertPserverTLS(t *testing.T, addr string) {
	t.Helper()
	certs := filepath.Join(hc.Dir, "pki")
	f := pki.Files{CA: filepath.Join(certs, pki.CACertFile), Cert: pki.CertPath(certs, "alice"), Key: pki.KeyPath(certs, "alice")}
	tlsCreds, err := f.ClientCreds()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		creds credentials.TransportCredentials
		want  codes.Code
	}{
		{"plaintext", insecure.NewCredentials(), codes.Unavailable},
		{"mutual TLS", tlsCreds, codes.OK},
	} {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(tc.creds), hc.GRPCDialer())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err = api.NewPServerClient(conn).Info(ctx, &api.InfoRequest{})
		cancel()
		conn.Close()
		if status.Code(err) != tc.want {
			t.Errorf("pserver at %s, %s client: %v, want %s", addr, tc.name, err, tc.want)
		}
	}
}

// AssertRefused: gctl without TLS, and gctl trusting another CA, cannot
// reach the agents.
func (hc *HostCluster) AssertRefused(t *testing.T) {
	t.Helper()
	other := filepath.Join(hc.Dir, "other-pki")
	CertCmd(t, "init", "--dir", other)
	CertCmd(t, "issue", "--dir", other, "--client", "mallory", "--role", "admin")
	good := hc.GctlConfig
	defer func() { hc.GctlConfig = good }()
	for name, conf := range map[string]string{"plaintext": "", "another CA": GctlConfig(t, hc.Dir, "other", other, "mallory")} {
		hc.GctlConfig = conf
		_, errs, code := hc.GctlOn(t, 0, "node", "list")
		if code == 0 {
			t.Errorf("gctl %s: node list succeeded against a TLS agent", name)
		}
		if name == "another CA" && !strings.Contains(errs, "certificate") {
			t.Errorf("gctl %s: %q does not say the certificate is the problem", name, errs)
		}
	}
}
