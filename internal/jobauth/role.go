package jobauth

import (
	"context"
	"encoding/base64"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/gtrain/gtrain/pki"
)

// Role is a role process's side of its job's data plane: the node's TLS
// files (zero: plaintext), the job, and the job's secret (nil: none).
type Role struct {
	TLS    pki.Files
	Job    string
	Secret []byte
}

// LoadRole reads the secret at credentialPath ("" for none).
func LoadRole(tls pki.Files, job, credentialPath string) (Role, error) {
	secret, err := ReadFile(credentialPath)
	if err != nil {
		return Role{}, err
	}
	return Role{TLS: tls, Job: job, Secret: secret}, nil
}

// ServerOptions make a master's or pserver's gRPC server require what
// Guard checks: mutual TLS with a client certificate (RoleServerCreds) and
// the job's credential on every call.
func (r Role) ServerOptions() ([]grpc.ServerOption, error) {
	creds, err := r.TLS.RoleServerCreds()
	if err != nil {
		return nil, err
	}
	g := NewGuard(r.Job, r.Secret, r.TLS.Enabled())
	return []grpc.ServerOption{grpc.Creds(creds), grpc.ChainUnaryInterceptor(g.Unary), grpc.ChainStreamInterceptor(g.Stream)}, nil
}

// Dial is what the role dials its job's master and pservers with.
func (r Role) Dial() (Dial, error) {
	creds, err := r.TLS.ClientCreds()
	if err != nil {
		return Dial{}, err
	}
	d := Dial{Transport: creds}
	if r.Secret != nil {
		d.Job = PerRPC(r.Job, r.Secret)
	}
	return d, nil
}

// Dial is how a client reaches a job's master or pservers: its transport
// (nil: plaintext) and the job credential sent with every call (nil: none).
type Dial struct {
	Transport credentials.TransportCredentials
	Job       credentials.PerRPCCredentials
}

// Options are d as gRPC dial options.
func (d Dial) Options() []grpc.DialOption {
	creds := d.Transport
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	if d.Job != nil {
		opts = append(opts, grpc.WithPerRPCCredentials(d.Job))
	}
	return opts
}

// PerRPC is the job credential of job a client sends with every call.
func PerRPC(job string, secret []byte) credentials.PerRPCCredentials {
	return perRPC{job: job, secret: secret}
}

type perRPC struct {
	job    string
	secret []byte
}

func (c perRPC) GetRequestMetadata(ctx context.Context, _ ...string) (map[string]string, error) {
	ri, _ := credentials.RequestInfoFromContext(ctx)
	b, err := binding(ri.AuthInfo)
	if err != nil {
		return nil, err
	}
	return map[string]string{JobKey: c.job, TokenKey: base64.RawStdEncoding.EncodeToString(token(c.secret, c.job, b))}, nil
}

// RequireTransportSecurity is false: a plaintext (dev) cluster checks the
// credential too, unbound to a connection.
func (perRPC) RequireTransportSecurity() bool { return false }

// binding is the keying material of a TLS connection (nil on plaintext),
// the same at both ends of that connection only.
func binding(info credentials.AuthInfo) ([]byte, error) {
	ti, ok := info.(credentials.TLSInfo)
	if !ok {
		return nil, nil
	}
	b, err := ti.State.ExportKeyingMaterial(ekmLabel, nil, 32)
	if err != nil {
		return nil, fmt.Errorf("jobauth: bind the job credential to the TLS connection: %w", err)
	}
	return b, nil
}
