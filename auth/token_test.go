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
		id, err := VerifyToken(ca, tok)
		if err != nil {
			t.Fatalf("%s: %v", role, err)
		}
		if want := (Identity{Name: "alice", Role: role, Via: ViaToken}); id != want {
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
		return jwt.MapClaims{"sub": "alice", "role": "admin", "exp": time.Now().Add(time.Minute).Unix()}
	}
	good, err := SignToken(key, "alice", Viewer, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(good, ".")
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
	} {
		id, err := VerifyToken(ca, tok)
		if !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s: got %+v, %v; want ErrInvalidToken", name, id, err)
		}
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
