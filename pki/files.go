package pki

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gtrain/gtrain/internal/atomicfile"
)

// File names in a certificate directory.
const (
	CACertFile = "ca.crt"
	CAKeyFile  = "ca.key"
)

// Modes of the files written: keys are secrets of their owner.
const (
	keyMode  fs.FileMode = 0o600
	certMode fs.FileMode = 0o644
)

// Errors of the certificate directory.
var (
	ErrExists = errors.New("already exists")
	ErrNoCA   = errors.New("no CA")
	// ErrKeyMode is a private key file its group or others may open.
	ErrKeyMode = errors.New("a key file open to group or others")
)

// CheckKeyFile refuses the private key file path (what names it: a flag)
// when its group or others have any access to it: the key must be the
// agent's user's alone (gtraind cert writes them 0600). A file that cannot
// be stat'ed passes: whatever loads it says why it cannot.
func CheckKeyFile(what, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	if m := fi.Mode().Perm(); m&0o077 != 0 {
		return fmt.Errorf("%w: %s %s has mode %#o; only the agent's user may read it: chmod 600 %s (owned by that user)",
			ErrKeyMode, what, path, m, path)
	}
	return nil
}

// CertPath and KeyPath are where WriteIssued puts name's certificate and key.
func CertPath(dir, name string) string { return filepath.Join(dir, name+".crt") }
func KeyPath(dir, name string) string  { return filepath.Join(dir, name+".key") }

// WriteCA writes ca.crt and ca.key into dir (created 0755 if missing). It
// refuses to replace an existing CA unless force: every certificate that CA
// signed would stop being trusted.
func WriteCA(dir string, ca *CA, force bool) error {
	certPEM, keyPEM, err := encodePair(ca.Cert.Raw, ca.Key)
	if err != nil {
		return err
	}
	return writePair(dir, CACertFile, CAKeyFile, certPEM, keyPEM, force)
}

// WriteIssued writes NAME.crt and NAME.key into dir; it refuses to replace
// them unless force.
func WriteIssued(dir, name string, is *Issued, force bool) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	return writePair(dir, name+".crt", name+".key", is.CertPEM, is.KeyPEM, force)
}

func writePair(dir, certName, keyName string, certPEM, keyPEM []byte, force bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	certPath, keyPath := filepath.Join(dir, certName), filepath.Join(dir, keyName)
	if !force {
		for _, p := range []string{certPath, keyPath} {
			if _, err := os.Lstat(p); err == nil {
				return fmt.Errorf("pki: %s %w (pass --force to replace it)", p, ErrExists)
			}
		}
	}
	if err := atomicfile.WriteFile(keyPath, keyPEM, keyMode); err != nil {
		return fmt.Errorf("pki: write %s: %w", keyPath, err)
	}
	if err := atomicfile.WriteFile(certPath, certPEM, certMode); err != nil {
		return fmt.Errorf("pki: write %s: %w", certPath, err)
	}
	return nil
}

// LoadCA reads dir's ca.crt and ca.key.
func LoadCA(dir string) (*CA, error) {
	certPath, keyPath := filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile)
	cert, err := readCert(certPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("pki: %w in %s: run `gtraind cert init --dir %s` first", ErrNoCA, dir, dir)
	}
	if err != nil {
		return nil, err
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("pki: %s: %w", certPath, ErrNotCA)
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, fmt.Errorf("pki: CA key: %w", err)
	}
	key, err := decodeKey(keyPath, keyPEM)
	if err != nil {
		return nil, err
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("pki: %s does not hold the key of %s", keyPath, certPath)
	}
	return &CA{Cert: cert, Key: key}, nil
}

// readCert reads the first certificate of a PEM file.
func readCert(path string) (*x509.Certificate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("pki: %s holds no PEM certificate", path)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("pki: %s: %w", path, err)
	}
	return cert, nil
}

func decodeKey(path string, b []byte) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("pki: %s holds no PEM key", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("pki: %s: %w", path, err)
	}
	key, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("pki: %s: a %T key, want ECDSA", path, k)
	}
	return key, nil
}

// encodePair is a certificate (DER) and its key as PEM (PKCS #8).
func encodePair(der []byte, key *ecdsa.PrivateKey) (certPEM, keyPEM []byte, err error) {
	k, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("pki: encode key: %w", err)
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: k})
	return certPEM, keyPEM, nil
}
