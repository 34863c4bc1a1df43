package auth

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gtrain/gtrain/internal/atomicfile"
)

// ErrBadPEM marks a CA file that holds no usable PEM block.
var ErrBadPEM = errors.New("bad PEM file")

// WriteClientToken signs a token for name with role (valid for ttl) with the
// CA in caCertFile/caKeyFile and writes it to dir/NAME.token, mode 0600 (it
// is a credential). It checks that the key is the certificate's, so that
// the token verifies against the CA the agents hold.
func WriteClientToken(dir, caCertFile, caKeyFile, name string, role Role, ttl time.Duration) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	if filepath.Base(name) != name || name == "." || name == ".." {
		return "", fmt.Errorf("%w %q: it names the token file, so no '/'", ErrBadName, name)
	}
	ca, err := ReadCertificate(caCertFile)
	if err != nil {
		return "", err
	}
	key, err := ReadKey(caKeyFile)
	if err != nil {
		return "", err
	}
	if pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(ca.PublicKey) {
		return "", fmt.Errorf("%w: CA key %s does not belong to CA certificate %s", ErrBadKey, caKeyFile, caCertFile)
	}
	token, err := SignToken(key, name, role, ttl)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name+".token")
	if err := atomicfile.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write token %s: %w", path, err)
	}
	return path, nil
}

// ReadCertificate is the first certificate of a PEM file (the CA's).
func ReadCertificate(file string) (*x509.Certificate, error) {
	block, err := readPEM(file, "CERTIFICATE")
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadPEM, file, err)
	}
	return cert, nil
}

// ReadKey is the private key of a PEM file: PKCS#8 or SEC 1 ("EC PRIVATE KEY").
func ReadKey(file string) (crypto.Signer, error) {
	block, err := readPEM(file, "")
	if err != nil {
		return nil, err
	}
	if k, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: not a PKCS#8 or EC private key: %v", ErrBadPEM, file, err)
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%w: %s: a %T key cannot sign", ErrBadKey, file, k)
	}
	return signer, nil
}

// readPEM is the first PEM block of file, of type typ unless typ is "".
func readPEM(file, typ string) (*pem.Block, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		return nil, fmt.Errorf("%w: %s holds no PEM block", ErrBadPEM, file)
	}
	if typ != "" && block.Type != typ {
		return nil, fmt.Errorf("%w: %s holds a %q block, want %q", ErrBadPEM, file, block.Type, typ)
	}
	return block, nil
}
