package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/gtrain/gtrain/internal/testing/testpki"
)

// testCA is a throwaway self-signed ECDSA P-256 CA.
func testCA(t *testing.T) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	ca := testpki.New(t)
	return ca.Cert, ca.Key
}

func TestTokenRoundTrip(t *testing.T) {
	ca, key := testCA(t)
	for _, role := range []Role{Viewer, Operator, Admin} {
		tok, err := SignToken(key, "alice", role, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		id, err := VerifyToken(ca, tok.Raw)
		if err != nil {
			t.Fatalf("%s: %v", role, err)
		}
		if want := (Identity{Name: "alice", Role: role, Via: ViaToken, TokenID: tok.ID}); id != want || !TokenIDOK(tok.ID) {
			t.Errorf("got %+v, want %+v", id, want)
		}
	}
}

// signRaw signs arbitrary claims with method and key, as a forger would.
func signRaw(t *testing.T, method jwt.SigningMethod, key any, c jwt.MapClaims) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(method, c).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestVerifyTokenRejects(t *testing.T) {
	ca, key := testCA(t)
	_, otherKey := testCA(t)
	valid := func() jwt.MapClaims {
		now := time.Now()
		return jwt.MapClaims{"sub": "alice", "role": "admin", "iss": TokenIssuer, "aud": TokenAudience, "jti": "j1",
			"iat": now.Unix(), "exp": now.Add(time.Minute).Unix()}
	}
	good, err := SignToken(key, "alice", Viewer, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(good.Raw, ".")
	// The payload re-encoded with role admin: the signature no longer fits.
	adminPayload := strings.Split(signRaw(t, jwt.SigningMethodES256, key, valid()), ".")[1]
	expired := valid()
	expired["exp"] = time.Now().Add(-time.Minute).Unix()
	noExp := valid()
	delete(noExp, "exp")
	badRole := valid()
	badRole["role"] = "node"
	noSub := valid()
	delete(noSub, "sub")
	without := func(claim string) jwt.MapClaims { c := valid(); delete(c, claim); return c }
	with := func(claim string, v any) jwt.MapClaims { c := valid(); c[claim] = v; return c }
	tooLong := with("exp", time.Now().Add(DefaultMaxLifetime+time.Hour).Unix())
	for name, tok := range map[string]string{
		"expired":      signRaw(t, jwt.SigningMethodES256, key, expired),
		"no exp":       signRaw(t, jwt.SigningMethodES256, key, noExp),
		"wrong CA":     signRaw(t, jwt.SigningMethodES256, otherKey, valid()),
		"alg none":     signRaw(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, valid()),
		"HS256":        signRaw(t, jwt.SigningMethodHS256, []byte("secret"), valid()),
		"HS256 CA pub": signRaw(t, jwt.SigningMethodHS256, ca.RawSubjectPublicKeyInfo, valid()),
		"tampered":     parts[0] + "." + adminPayload + "." + parts[2],
		"truncated":    parts[0] + "." + parts[1],
		"node role":    signRaw(t, jwt.SigningMethodES256, key, badRole),
		"no sub":       signRaw(t, jwt.SigningMethodES256, key, noSub),
		"garbage":      "not a token",
		"no jti":       signRaw(t, jwt.SigningMethodES256, key, without("jti")),
		"no iss":       signRaw(t, jwt.SigningMethodES256, key, without("iss")),
		"other iss":    signRaw(t, jwt.SigningMethodES256, key, with("iss", "kubernetes")),
		"no aud":       signRaw(t, jwt.SigningMethodES256, key, without("aud")),
		"other aud":    signRaw(t, jwt.SigningMethodES256, key, with("aud", "console")),
		"no iat":       signRaw(t, jwt.SigningMethodES256, key, without("iat")),
		"future iat":   signRaw(t, jwt.SigningMethodES256, key, with("iat", time.Now().Add(time.Hour).Unix())),
		"too long":     signRaw(t, jwt.SigningMethodES256, key, tooLong),
	} {
		id, err := VerifyToken(ca, tok)
		if !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s: got %+v, %v; want ErrInvalidToken", name, id, err)
		}
	}
}

// TestTokenLifetime: an agent refuses a token that lives longer than its
// maximum, and accepts it with a larger one.
func TestTokenLifetime(t *testing.T) {
	ca, key := testCA(t)
	tok, err := SignToken(key, "alice", Viewer, 48*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (Verifier{CAs: []*x509.Certificate{ca}}).Verify(tok.Raw); !errors.Is(err, ErrInvalidToken) || !strings.Contains(err.Error(), "--token-max-lifetime") {
		t.Errorf("48 h token, default maximum: %v, want refused", err)
	}
	if _, err := (Verifier{CAs: []*x509.Certificate{ca}, MaxLifetime: 48 * time.Hour}).Verify(tok.Raw); err != nil {
		t.Errorf("48 h token, 48 h maximum: %v", err)
	}
}

// TestTokenEveryCA: a token signed by any CA of the bundle verifies (a
// rotation puts the new CA beside the old one); one signed by neither does not.
func TestTokenEveryCA(t *testing.T) {
	oldCA, oldKey := testCA(t)
	newCA, newKey := testCA(t)
	_, strangerKey := testCA(t)
	v := Verifier{CAs: []*x509.Certificate{oldCA, newCA}}
	for _, key := range []*ecdsa.PrivateKey{oldKey, newKey} {
		tok, err := SignToken(key, "alice", Viewer, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if id, err := v.Verify(tok.Raw); err != nil || id.Name != "alice" {
			t.Errorf("token of a bundle CA: %+v, %v", id, err)
		}
	}
	tok, err := SignToken(strangerKey, "alice", Viewer, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(tok.Raw); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("token of another CA: %v, want ErrInvalidToken", err)
	}
}

// TestTokenRevoked: a revoked id is refused with ErrRevokedToken, others pass.
func TestTokenRevoked(t *testing.T) {
	ca, key := testCA(t)
	a, _ := SignToken(key, "alice", Viewer, time.Hour)
	b, _ := SignToken(key, "alice", Viewer, time.Hour)
	v := Verifier{CAs: []*x509.Certificate{ca}, Revoked: func(id string) bool { return id == a.ID }}
	if _, err := v.Verify(a.Raw); !errors.Is(err, ErrRevokedToken) {
		t.Errorf("revoked token: %v, want ErrRevokedToken", err)
	}
	if _, err := v.Verify(b.Raw); err != nil {
		t.Errorf("another token of the same user: %v", err)
	}
}

func TestSignTokenRejects(t *testing.T) {
	_, key := testCA(t)
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		key  crypto.Signer
		name string
		role Role
		ttl  time.Duration
		want error
	}{
		"P-384 key":  {p384, "alice", Admin, time.Minute, ErrBadKey},
		"empty name": {key, "", Admin, time.Minute, ErrBadName},
		"space":      {key, "al ice", Admin, time.Minute, ErrBadName},
		"no role":    {key, "alice", 0, time.Minute, ErrUnknownRole},
		"zero ttl":   {key, "alice", Admin, 0, nil},
	} {
		_, err := SignToken(c.key, c.name, c.role, c.ttl)
		if err == nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", name, err, c.want)
		}
	}
}
