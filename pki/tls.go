package pki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// ErrIncomplete means some but not all of the TLS files were given.
var ErrIncomplete = errors.New("incomplete TLS settings")

// Files are a process's TLS files (PEM): the cluster CA, its certificate
// and that certificate's key. The zero value means plaintext.
type Files struct {
	CA, Cert, Key string
}

// Enabled reports whether any file is given (Validate says whether all are).
func (f Files) Enabled() bool { return f.CA != "" || f.Cert != "" || f.Key != "" }

// Validate accepts all three files or none.
func (f Files) Validate() error {
	if f.Enabled() && (f.CA == "" || f.Cert == "" || f.Key == "") {
		return fmt.Errorf("%w: --tls-ca, --tls-cert and --tls-key go together (got ca %q, cert %q, key %q)",
			ErrIncomplete, f.CA, f.Cert, f.Key)
	}
	return nil
}

// Abs makes the paths absolute, for processes started in another directory.
func (f Files) Abs() (Files, error) {
	for _, p := range []*string{&f.CA, &f.Cert, &f.Key} {
		if *p == "" {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return f, fmt.Errorf("pki: %s: %w", *p, err)
		}
		*p = abs
	}
	return f, nil
}

// load reads the CA pool (every certificate of the bundle) and the key
// pair, which is re-read when its files change (reload.go).
func (f Files) load() (*x509.CertPool, *keyPair, error) {
	if err := f.Validate(); err != nil {
		return nil, nil, err
	}
	b, err := os.ReadFile(f.CA)
	if err != nil {
		return nil, nil, fmt.Errorf("pki: --tls-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, nil, fmt.Errorf("pki: --tls-ca %s holds no PEM certificate", f.CA)
	}
	kp, err := loadKeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, nil, err
	}
	return pool, kp, nil
}

// ServerConfig serves with the certificate (the files' current one at
// each handshake) and verifies a client certificate against the CA when
// one is given. A client without one still gets through the handshake — a
// gctl context with a bearer token has no certificate — and the
// authorization layer refuses callers with neither. It is the Control
// API's; the roles serve with RoleServerConfig.
func (f Files) ServerConfig() (*tls.Config, error) {
	return f.serverConfig(tls.VerifyClientCertIfGiven)
}

// RoleServerConfig is the TLS of a master's or pserver's server: only a
// client with a certificate the CA signed completes the handshake (the
// roles of a job dial each other with their node's certificate; nothing
// there takes a bearer token).
func (f Files) RoleServerConfig() (*tls.Config, error) {
	return f.serverConfig(tls.RequireAndVerifyClientCert)
}

func (f Files) serverConfig(auth tls.ClientAuthType) (*tls.Config, error) {
	pool, kp, err := f.load()
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return kp.current(), nil },
		ClientCAs:      pool,
		ClientAuth:     auth,
	}, nil
}

// ClientConfig trusts servers the CA signed and presents the certificate
// (the files' current one at each handshake). The server name is left to
// the dialler (gRPC uses the host it dials, an IP being checked against
// the IP SANs).
func (f Files) ClientConfig() (*tls.Config, error) {
	pool, kp, err := f.load()
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:           tls.VersionTLS12,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return kp.current(), nil },
		RootCAs:              pool,
	}, nil
}

// ServerCreds are the gRPC transport credentials of the Control API:
// mutual TLS (ServerConfig), or plaintext for the zero Files.
func (f Files) ServerCreds() (credentials.TransportCredentials, error) {
	return f.serverCreds(f.ServerConfig)
}

// RoleServerCreds are those of a master's or pserver's server: mutual TLS
// that requires a client certificate (RoleServerConfig), or plaintext for
// the zero Files.
func (f Files) RoleServerCreds() (credentials.TransportCredentials, error) {
	return f.serverCreds(f.RoleServerConfig)
}

func (f Files) serverCreds(config func() (*tls.Config, error)) (credentials.TransportCredentials, error) {
	if !f.Enabled() {
		return insecure.NewCredentials(), nil
	}
	c, err := config()
	if err != nil {
		return nil, err
	}
	return credentials.NewTLS(c), nil
}

// ClientCreds are the gRPC transport credentials of a client: mutual TLS,
// or plaintext for the zero Files.
func (f Files) ClientCreds() (credentials.TransportCredentials, error) {
	if !f.Enabled() {
		return insecure.NewCredentials(), nil
	}
	c, err := f.ClientConfig()
	if err != nil {
		return nil, err
	}
	return credentials.NewTLS(c), nil
}
