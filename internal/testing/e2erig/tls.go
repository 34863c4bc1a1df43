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
	"github.com/gtrain/gtrain/coord"
	"github.com/gtrain/gtrain/internal/jobauth"
	"github.com/gtrain/gtrain/pki"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
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

// AssertDataPlaneRefuses (issue 19): the running job's pserver at addr
// and its master answer none of their calls — Info, Pull, Push, Restore
// (with a term that would lock out every real one), RegisterTrainer,
// GetTask — to a client without a certificate, with an operator's
// certificate, or with a node's certificate but no job credential,
// another job's, or the job's name under another secret. A raw client
// with the job's own credential is answered, so the refusals are the
// guard's and not a broken connection, but its Restore in a term that is
// not the job's master's is refused.
func (hc *HostCluster) AssertDataPlaneRefuses(t *testing.T, job, pserverAddr string) {
	t.Helper()
	cli := hc.EtcdTestClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	masterAddr, err := coord.LeaderValue(ctx, cli, coord.ElectionPrefix(job))
	if err != nil {
		t.Fatal(err)
	}
	_, rev, err := coord.GetJobRecord(ctx, cli, job)
	if err != nil {
		t.Fatal(err)
	}
	secret, _, err := coord.GetJobSecret(ctx, cli, job, rev)
	if err != nil || secret == nil {
		t.Fatalf("job %s's secret: %x, %v", job, secret, err)
	}
	certs := filepath.Join(hc.Dir, "pki")
	ca := filepath.Join(certs, pki.CACertFile)
	node, alice := hc.tlsCreds(t, certs, hc.Hosts[0].Name), hc.tlsCreds(t, certs, "alice")
	caOnly, err := credentials.NewClientTLSFromFile(ca, "")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := jobauth.NewSecret()
	for _, c := range []struct {
		name string
		dial jobauth.Dial
		want codes.Code
	}{
		{"no certificate", jobauth.Dial{Transport: caOnly, Job: jobauth.PerRPC(job, secret)}, codes.Unavailable},
		{"alice's (operator) certificate", jobauth.Dial{Transport: alice, Job: jobauth.PerRPC(job, secret)}, codes.PermissionDenied},
		{"a node certificate, no job credential", jobauth.Dial{Transport: node}, codes.Unauthenticated},
		{"a node certificate, another job's credential", jobauth.Dial{Transport: node, Job: jobauth.PerRPC("other", other)}, codes.PermissionDenied},
		{"a node certificate, the job's name under another secret", jobauth.Dial{Transport: node, Job: jobauth.PerRPC(job, other)}, codes.Unauthenticated},
	} {
		for call, code := range hc.dataPlaneCalls(t, c.dial, pserverAddr, masterAddr) {
			if code != c.want {
				t.Errorf("%s with %s: %s, want %s", call, c.name, code, c.want)
			}
		}
	}
	ps := api.NewPServerClient(hc.dialRaw(t, jobauth.Dial{Transport: node, Job: jobauth.PerRPC(job, secret)}, pserverAddr))
	if _, err := ps.Info(ctx, &api.InfoRequest{}); err != nil {
		t.Errorf("pserver Info with the job's own credential: %v", err)
	}
	// Even the job's credential cannot claim a master's term: the pserver
	// reads the term of the job's master from etcd.
	if _, err := ps.Restore(ctx, &api.RestoreRequest{Step: 0, Epoch: 1 << 40, Term: 1 << 40}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("pserver Restore in a claimed term with the job's own credential: %v, want PermissionDenied", err)
	}
}

// dataPlaneCalls makes each call a stranger would try on a job's pserver
// and master, and returns the code each ended with.
func (hc *HostCluster) dataPlaneCalls(t *testing.T, d jobauth.Dial, pserverAddr, masterAddr string) map[string]codes.Code {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ps := api.NewPServerClient(hc.dialRaw(t, d, pserverAddr))
	m := api.NewMasterClient(hc.dialRaw(t, d, masterAddr))
	got := map[string]codes.Code{}
	_, err := ps.Info(ctx, &api.InfoRequest{})
	got["pserver Info"] = status.Code(err)
	_, err = ps.Restore(ctx, &api.RestoreRequest{Step: 0, Epoch: 1 << 40, Term: 1 << 40})
	got["pserver Restore"] = status.Code(err)
	pull, err := ps.Pull(ctx, &api.PullRequest{})
	if err == nil {
		_, err = pull.Recv()
	}
	got["pserver Pull"] = status.Code(err)
	push, err := ps.Push(ctx)
	if err == nil {
		_, err = push.CloseAndRecv()
	}
	got["pserver Push"] = status.Code(err)
	_, err = m.RegisterTrainer(ctx, &api.RegisterTrainerRequest{})
	got["master RegisterTrainer"] = status.Code(err)
	_, err = m.GetTask(ctx, &api.GetTaskRequest{})
	got["master GetTask"] = status.Code(err)
	return got
}

// dialRaw is a client of addr in the cluster's network, closed with the
// test.
func (hc *HostCluster) dialRaw(t *testing.T, d jobauth.Dial, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, append(d.Options(), hc.GRPCDialer())...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// tlsCreds are the client credentials of name's certificate in certs.
func (hc *HostCluster) tlsCreds(t *testing.T, certs, name string) credentials.TransportCredentials {
	t.Helper()
	f := pki.Files{CA: filepath.Join(certs, pki.CACertFile), Cert: pki.CertPath(certs, name), Key: pki.KeyPath(certs, name)}
	c, err := f.ClientCreds()
	if err != nil {
		t.Fatal(err)
	}
	return c
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
