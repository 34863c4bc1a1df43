package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var (
	// ErrInvalidToken marks a bearer token an agent refuses: malformed,
	// signed by another key or with another algorithm, expired, or naming
	// no valid subject or role.
	ErrInvalidToken = errors.New("invalid bearer token")
	// ErrBadKey marks a CA key or certificate that cannot sign or verify
	// tokens: tokens are ES256, so the CA key must be ECDSA P-256.
	ErrBadKey = errors.New("CA key cannot sign ES256 tokens")
	// ErrBadName marks a client name unfit for a token subject.
	ErrBadName = errors.New("invalid client name")
)

// tokenAlg is the only algorithm tokens are signed with and accepted in.
const tokenAlg = "ES256"

// claims are a token's: sub (client name), role, exp, iat.
type claims struct {
	Role string `json:"role"`
	jwt.RegisteredClaims
}

// SignToken is a bearer token for name with role, valid for ttl, signed with
// the cluster CA's key (an ECDSA P-256 private key).
func SignToken(caKey crypto.Signer, name string, role Role, ttl time.Duration) (string, error) {
	key, ok := caKey.(*ecdsa.PrivateKey)
	if !ok || key.Curve != elliptic.P256() {
		return "", fmt.Errorf("%w: got a %T key; `gtraind cert init` makes an ECDSA P-256 CA", ErrBadKey, caKey)
	}
	if err := checkName(name); err != nil {
		return "", err
	}
	if _, err := ParseRole(role.String()); err != nil {
		return "", err
	}
	if ttl <= 0 {
		return "", fmt.Errorf("token lifetime %s: want a positive duration", ttl)
	}
	now := time.Now()
	c := claims{Role: role.String(), RegisteredClaims: jwt.RegisteredClaims{
		Subject:   name,
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
	}}
	signed, err := jwt.NewWithClaims(jwt.SigningMethodES256, c).SignedString(key)
	if err != nil {
		return "", fmt.Errorf("sign token for %s: %w", name, err)
	}
	return signed, nil
}

// VerifyToken is the identity a token names, once its ES256 signature checks
// out against the CA certificate's key and it has not expired.
func VerifyToken(ca *x509.Certificate, token string) (Identity, error) {
	pub, ok := ca.PublicKey.(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() {
		return Identity{}, fmt.Errorf("%w: CA certificate %q has a %T key", ErrBadKey, ca.Subject.CommonName, ca.PublicKey)
	}
	var c claims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return pub, nil },
		jwt.WithValidMethods([]string{tokenAlg}), jwt.WithExpirationRequired())
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	if err := checkName(c.Subject); err != nil {
		return Identity{}, fmt.Errorf("%w: sub: %v", ErrInvalidToken, err)
	}
	role, err := ParseRole(c.Role)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	return Identity{Name: c.Subject, Role: role, Via: ViaToken}, nil
}

// checkName keeps client names printable, since events and logs show them.
func checkName(name string) error {
	if name == "" || len(name) > 253 {
		return fmt.Errorf("%w %q: want 1 to 253 characters", ErrBadName, name)
	}
	for i, r := range name {
		if r <= ' ' || r > '~' {
			return fmt.Errorf("%w %q: character %q at byte %d; use letters, digits, '-', '.', '@'", ErrBadName, name, r, i)
		}
	}
	return nil
}
