package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var (
	// ErrInvalidToken marks a bearer token an agent refuses: malformed,
	// signed by another key or with another algorithm, expired, for
	// another issuer or audience, without an id, living longer than the
	// agent allows, or naming no valid subject or role.
	ErrInvalidToken = errors.New("invalid bearer token")
	// ErrRevokedToken marks a token an admin revoked (`gctl token revoke`).
	ErrRevokedToken = errors.New("revoked bearer token")
	// ErrBadKey marks a CA key or certificate that cannot sign or verify
	// tokens: tokens are ES256, so the CA key must be ECDSA P-256.
	ErrBadKey = errors.New("CA key cannot sign ES256 tokens")
	// ErrBadName marks a client name unfit for a token subject.
	ErrBadName = errors.New("invalid client name")
)

const (
	// tokenAlg is the only algorithm tokens are signed with and accepted in.
	tokenAlg = "ES256"
	// TokenIssuer (iss) and TokenAudience (aud) keep a token of another
	// system signed by the same key from being taken for one of gtrain's.
	TokenIssuer   = "gtrain"
	TokenAudience = "gtrain-control"
	// DefaultMaxLifetime is the longest exp-iat an agent accepts unless
	// told otherwise (--token-max-lifetime), and the default life of a
	// token `gtraind cert issue` writes: a leaked token expires within a day.
	DefaultMaxLifetime = 24 * time.Hour
	// clockSkew is how far in the future a token's iat may be (clocks
	// of the issuing host and the agent differ a little).
	clockSkew = time.Minute
)

// claims are a token's: sub (client name), role, iss, aud, jti, exp, iat.
type claims struct {
	Role string `json:"role"`
	jwt.RegisteredClaims
}

// Token is a signed bearer token and what an admin needs to revoke it.
type Token struct {
	Raw     string    // the JWT
	ID      string    // jti: `gctl token revoke ID`
	Expires time.Time // exp
}

// SignToken is a bearer token for name with role, valid for ttl, signed with
// the cluster CA's key (an ECDSA P-256 private key), with a random id.
func SignToken(caKey crypto.Signer, name string, role Role, ttl time.Duration) (Token, error) {
	key, ok := caKey.(*ecdsa.PrivateKey)
	if !ok || key.Curve != elliptic.P256() {
		return Token{}, fmt.Errorf("%w: got a %T key; `gtraind cert init` makes an ECDSA P-256 CA", ErrBadKey, caKey)
	}
	if err := checkName(name); err != nil {
		return Token{}, err
	}
	if _, err := ParseRole(role.String()); err != nil {
		return Token{}, err
	}
	if ttl <= 0 {
		return Token{}, fmt.Errorf("token lifetime %s: want a positive duration", ttl)
	}
	id, err := newTokenID()
	if err != nil {
		return Token{}, err
	}
	now := time.Now()
	c := claims{Role: role.String(), RegisteredClaims: jwt.RegisteredClaims{
		Issuer:    TokenIssuer,
		Audience:  jwt.ClaimStrings{TokenAudience},
		ID:        id,
		Subject:   name,
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
	}}
	signed, err := jwt.NewWithClaims(jwt.SigningMethodES256, c).SignedString(key)
	if err != nil {
		return Token{}, fmt.Errorf("sign token for %s: %w", name, err)
	}
	return Token{Raw: signed, ID: id, Expires: c.ExpiresAt.Time}, nil
}

// newTokenID is 128 random bits in hex: unguessable and safe in an etcd key.
func newTokenID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("token id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// TokenIDOK reports whether id can be a token's id (a revocation's key).
func TokenIDOK(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Verifier checks bearer tokens against every certificate of the cluster
// CA bundle (a bundle holds the old and the new CA while it is rotated).
type Verifier struct {
	CAs []*x509.Certificate
	// MaxLifetime is the longest exp-iat accepted; 0 is DefaultMaxLifetime.
	MaxLifetime time.Duration
	// Revoked reports whether a token id was revoked; nil: none is.
	Revoked func(id string) bool
}

// VerifyToken checks a token against one CA certificate with the default
// lifetime and no revocations.
func VerifyToken(ca *x509.Certificate, token string) (Identity, error) {
	return Verifier{CAs: []*x509.Certificate{ca}}.Verify(token)
}

// Verify is the identity a token names, once its ES256 signature checks out
// against one of the CA certificates' keys and its claims are acceptable.
func (v Verifier) Verify(token string) (Identity, error) {
	if len(v.CAs) == 0 {
		return Identity{}, fmt.Errorf("%w: no CA certificate to verify it with", ErrInvalidToken)
	}
	var c claims
	var err error
	for _, ca := range v.CAs {
		pub, ok := ca.PublicKey.(*ecdsa.PublicKey)
		if !ok || pub.Curve != elliptic.P256() {
			err = fmt.Errorf("%w: CA certificate %q has a %T key", ErrBadKey, ca.Subject.CommonName, ca.PublicKey)
			continue
		}
		c = claims{}
		_, err = jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return pub, nil },
			jwt.WithValidMethods([]string{tokenAlg}), jwt.WithExpirationRequired(), jwt.WithIssuedAt(),
			jwt.WithIssuer(TokenIssuer), jwt.WithAudience(TokenAudience), jwt.WithLeeway(clockSkew))
		if !errors.Is(err, jwt.ErrTokenSignatureInvalid) {
			break // signed by this CA (or not a token at all): no other CA will do better
		}
	}
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	return v.accept(c)
}

// accept checks what the JWT library does not: jti, iat, the lifetime,
// revocation, subject and role.
func (v Verifier) accept(c claims) (Identity, error) {
	max := v.MaxLifetime
	if max <= 0 {
		max = DefaultMaxLifetime
	}
	switch {
	case c.ID == "":
		return Identity{}, fmt.Errorf("%w: it has no id (jti); tokens from before revocation existed are no longer accepted", ErrInvalidToken)
	case c.IssuedAt == nil:
		return Identity{}, fmt.Errorf("%w: it has no issue time (iat)", ErrInvalidToken)
	case c.ExpiresAt.Sub(c.IssuedAt.Time) > max:
		return Identity{}, fmt.Errorf("%w: it lives %s, longer than this agent's --token-max-lifetime %s",
			ErrInvalidToken, c.ExpiresAt.Sub(c.IssuedAt.Time), max)
	case v.Revoked != nil && v.Revoked(c.ID):
		return Identity{}, fmt.Errorf("%w: token %s was revoked by an admin", ErrRevokedToken, c.ID)
	}
	if err := checkName(c.Subject); err != nil {
		return Identity{}, fmt.Errorf("%w: sub: %v", ErrInvalidToken, err)
	}
	role, err := ParseRole(c.Role)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	return Identity{Name: c.Subject, Role: role, Via: ViaToken, TokenID: c.ID}, nil
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
