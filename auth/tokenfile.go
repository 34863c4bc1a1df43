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
// the token verifies against the CA the agents hold. It returns the file
// and the token (its id is what `gctl token revoke` takes).
func WriteClientToken(dir, caCertFile, caKeyFile, name string, role Role, ttl time.Duration) (string, Token, error) {
	if err := checkName(name); err != nil {
		return "", Token{}, err
	}
	if filepath.Base(name) != name || name == "." || name == ".." {
		return "", Token{}, fmt.Errorf("%w %q: it names the token file, so no '/'", ErrBadName, name)
	}
	ca, err := ReadCertificate(caCertFile)
	if err != nil {
		return "", Token{}, err
	}
	key, err := ReadKey(caKeyFile)
	if err != nil {
		return "", Token{}, err
	}
	if pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(ca.PublicKey) {
		return "", Token{}, fmt.Errorf("%w: CA key %s does not belong to CA certificate %s", ErrBadKey, caKeyFile, caCertFile)
	}
	token, err := SignToken(key, name, role, ttl)
	if err != nil {
		return "", Token{}, err
	}
	path := filepath.Join(dir, name+".token")
	if err := atomicfile.WriteFile(path, []byte(token.Raw+"\n"), 0o600); err != nil {
		return "", Token{}, fmt.Errorf("write token %s: %w", path, err)
	}
	return path, token, nil
}

// ReadCertificates is every certificate of a PEM file (a CA bundle: while
// a CA is rotated it holds the old and the new one).
func ReadCertificates(file string) ([]*x509.Certificate, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []*x509.Certificate
	for block, rest := pem.Decode(raw); block != nil; block, rest = pem.Decode(rest) {
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: certificate %d: %v", ErrBadPEM, file, len(out)+1, err)
		}
		out = append(out, cert)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s holds no CERTIFICATE block", ErrBadPEM, file)
	}
	return out, nil
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
